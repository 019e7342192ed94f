/* A library that needs libcuda.so.1 by name, as a CUDA program does: the musl loader's --list of
 * it shows where its search path finds the driver's library. */
int cuDriverGetVersion(int* version);

int gcr_needs_libcuda(void) {
  int version = 0;
  return cuDriverGetVersion(&version);
}
