/* Stands in for ldconfig in tests of the ldconfig sandbox: reports what it can see and do
 * into the file after -C (the container's /etc/ld.so.cache), where the test reads it. Given
 * the folder /hang, it never ends (the sandbox's time limit must end it). */
#include <dirent.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern char** environ;

static int entries(const char* path) {
  DIR* dir = opendir(path);
  if (dir == NULL) return -1;
  int n = 0;
  struct dirent* e;
  while ((e = readdir(dir)) != NULL)
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(dir);
  return n;
}

int main(int argc, char** argv) {
  const char* out = "/etc/ld.so.cache";
  for (int i = 1; i + 1 < argc; ++i) {
    if (strcmp(argv[i], "-C") == 0) out = argv[i + 1];
  }
  for (int i = 1; i < argc; ++i) {
    while (strcmp(argv[i], "/hang") == 0) pause();
  }
  FILE* f = fopen(out, "w");
  if (f == NULL) return 1;
  int env = 0;
  for (char** e = environ; *e != NULL; ++e) ++env;
  fprintf(f, "proc=%d sys=%d env=%d nnp=%d caps=", entries("/proc"), entries("/sys"), env,
          prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
  for (int cap = 0; cap <= CAP_LAST_CAP; ++cap) {
    if (prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) fprintf(f, "%d,", cap);
  }
  fprintf(f, " argv=");
  for (int i = 0; i < argc; ++i) fprintf(f, "%s%s", i ? " " : "", argv[i]);
  fprintf(f, "\n");
  fclose(f);
  return 0;
}
