/* A stand-in for libcuda: answers cuDriverGetVersion like the real driver (e.g. 12040). */
#ifndef GCR_STUB_CUDA_VERSION
#error "GCR_STUB_CUDA_VERSION must be defined"
#endif

int cuDriverGetVersion(int* version) {
  if (version == 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
  *version = GCR_STUB_CUDA_VERSION;
  return 0; /* CUDA_SUCCESS */
}
