/* Runs inside test containers, through the container's own loader and ld.so.cache.
 *   probe            dlopen("libcuda.so.1") and print what cuDriverGetVersion answers;
 *   probe --cuinit   also call cuInit(0) and print its result (a real driver's libcuda
 *                    answers an error code when no kernel driver is there);
 *   probe NAME...    dlopen each NAME (a library name or a path) and print "NAME: ok" or
 *                    "NAME: <dlerror>". */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int open_each(int count, char** names) {
  int failed = 0;
  for (int i = 0; i < count; ++i) {
    void* lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
      printf("%s: %s\n", names[i], dlerror());
      failed = 1;
    } else {
      printf("%s: ok\n", names[i]);
    }
  }
  return failed;
}

int main(int argc, char** argv) {
  const int cuinit = argc > 1 && strcmp(argv[1], "--cuinit") == 0;
  if (argc > 1 && !cuinit) return open_each(argc - 1, argv + 1);
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
  if (cuinit) {
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
    if (init == NULL) {
      printf("no cuInit\n");
      return 1;
    }
    printf("cuInit: %d\n", init(0));
  }
  return 0;
}
