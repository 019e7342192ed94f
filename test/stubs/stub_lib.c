/* A stand-in for an NVIDIA driver library: a real ELF shared object with the driver's SONAME
 * that depends on libc like the real ones (so ldconfig files it as a libc6 library). */
#include <unistd.h>

int gcr_stub_library_marker(void) {
  return getpid() > 0;
}
