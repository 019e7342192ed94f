/* A stand-in for NVML with just what gpu-ctk info asks. Answers follow the simulated host's
 * convention: GPUs on PCI buses below 0x80 are compute capability 8.0, the others 7.0; the
 * GPU on bus 0xaf is a GeForce, every other one a Tesla. */
#include <stdio.h>
#include <string.h>

typedef struct {
  unsigned bus;
} gcr_stub_device;

static gcr_stub_device devices[256];
static int initialized;

int nvmlInit_v2(void) {
  initialized = 1;
  return 0;
}

int nvmlShutdown(void) {
  initialized = 0;
  return 0;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id, gcr_stub_device** device) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (!initialized) return 1; /* NVML_ERROR_UNINITIALIZED */
  if (sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4 || bus > 255) return 2;
  devices[bus].bus = bus;
  *device = &devices[bus];
  return 0;
}

int nvmlDeviceGetCudaComputeCapability(gcr_stub_device* device, int* major, int* minor) {
  *major = device->bus < 0x80 ? 8 : 7;
  *minor = 0;
  return 0;
}

int nvmlDeviceGetBrand(gcr_stub_device* device, int* brand) {
  *brand = device->bus == 0xaf ? 5 /* GeForce */ : 2 /* Tesla */;
  return 0;
}
