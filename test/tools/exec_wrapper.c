// exec-wrapper [PROGRAM ARGS...]: the least a runtime shim can do, statically linked: exec
// PROGRAM with ARGS, or exit 0 without arguments. scripts/bench.sh measures our shim's
// pass-through against it, and uses it as a do-nothing ldconfig.
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return 0;
  execv(argv[1], argv + 1);
  perror(argv[1]);
  return 127;
}
