/* A stand-in for NVML with just what gpu-ctk info asks. Answers follow the simulated host's
 * convention: GPUs on PCI buses below 0x80 are compute capability 8.0, the others 7.0; the
 * GPU on bus 0xaf is a GeForce, every other one a Tesla. The GPU on bus 0x3b is in MIG mode
 * with two MIG devices: GPU instance 1 / compute instance 0 and GPU instance 2 / compute
 * instance 0. */
#include <stdio.h>
#include <string.h>

typedef struct {
  unsigned bus;
  int mig_index; /* -1 for a GPU, else the MIG device's index on its GPU */
} gcr_stub_device;

static gcr_stub_device devices[256];
static gcr_stub_device migs[2] = {{0x3b, 0}, {0x3b, 1}};
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
  devices[bus].mig_index = -1;
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

int nvmlDeviceGetMaxMigDeviceCount(gcr_stub_device* device, unsigned* count) {
  *count = device->bus == 0x3b ? 7 : 0;
  return 0;
}

int nvmlDeviceGetMigDeviceHandleByIndex(gcr_stub_device* device, unsigned index,
                                        gcr_stub_device** mig) {
  if (device->bus != 0x3b || index >= 2) return 6; /* NVML_ERROR_NOT_FOUND */
  *mig = &migs[index];
  return 0;
}

int nvmlDeviceGetUUID(gcr_stub_device* device, char* uuid, unsigned length) {
  if (device->mig_index < 0) return 3; /* NVML_ERROR_NOT_SUPPORTED for this stub */
  snprintf(uuid, length, "MIG-5eed003b-0000-4000-8000-00000000000%d", device->mig_index);
  return 0;
}

int nvmlDeviceGetGpuInstanceId(gcr_stub_device* device, unsigned* id) {
  *id = (unsigned)device->mig_index + 1;
  return 0;
}

int nvmlDeviceGetComputeInstanceId(gcr_stub_device* device, unsigned* id) {
  (void)device;
  *id = 0;
  return 0;
}
