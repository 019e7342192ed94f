/* Runs inside test containers: dlopen("libcuda.so.1") through the container's own loader
 * and ld.so.cache, then prints what the stub driver answers. */
#include <dlfcn.h>
#include <stdio.h>

int main(void) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW);
  if (lib == NULL) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  int (*get_version)(int*) = (int (*)(int*))dlsym(lib, "cuDriverGetVersion");
  int version = 0;
  if (get_version == NULL || get_version(&version) != 0) {
    printf("cuDriverGetVersion failed\n");
    return 1;
  }
  printf("cuDriverGetVersion: %d\n", version);
  return 0;
}
