/* A stand-in for libcuda: answers cuDriverGetVersion like the real driver (e.g. 12040), and the
 * driver API gpu-cuda-probe uses, as a real driver on the simulated host's GPUs would: every
 * /dev/nvidia<N> node the process sees is a device (an A100-SXM4-40GB as NVML reports it: 108
 * SMs, 40960 MiB), cuInit fails with CUDA_ERROR_NO_DEVICE (100) when there is none, a module
 * loads only from PTX text that has an entry point, and the probe's kernel (`gcr_probe`:
 * out[i] = i * seed + 1) runs on the host over memory from cuMemAlloc. Under MPS (the
 * environment names a pipe directory) a client that cannot reach the daemon's `control` socket
 * fails as a real one does; one that can gets the thread percentage's share of the SMs and the
 * pinned-memory limit as its memory. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef GCR_STUB_CUDA_VERSION
#error "GCR_STUB_CUDA_VERSION must be defined"
#endif

enum {
  kSuccess = 0,
  kInvalidValue = 1,
  kOutOfMemory = 2,
  kNotInitialized = 3,
  kNoDevice = 100,
  kInvalidImage = 200,
  kNotFound = 500,
  kMpsConnectionFailed = 805,
};
enum { kSms = 108 };
static const unsigned long long kMemoryMib = 40960;

enum { kMaxBlocks = 64 };

static int initialized;
static int devices;
static unsigned long long allocated;
static struct {
  void* block;
  size_t bytes;
} blocks[kMaxBlocks];

#ifdef GCR_STUB_COMPAT_NOTE
/* NVIDIA's forward-compatibility note, as libcuda 575.57.08 carries it: the CUDA version it
 * provides and the driver branches it runs on (a JSON object owned by "NVIDIA Corporation"). */
__asm__(
    ".pushsection .note.cuda.fwd_compatibility,\"a\",@note\n"
    ".balign 4\n"
    ".long 19\n"
    ".long 2f - 1f\n"
    ".long 1\n"
    ".asciz \"NVIDIA Corporation\"\n"
    ".balign 4\n"
    "1: .ascii \"{\\\"Format\\\": 1, \\\"CUDA Version\\\": \\\"12.9\\\", \\\"Driver\\\": "
    "[535, 550, 560, 565, 570, 575], \\\"Device\\\": [1, 2, 7, 8, 9, 10, 11, 12, 13, 14]}\"\n"
    "2: .balign 4\n"
    ".popsection\n");
#endif

int cuDriverGetVersion(int* version) {
  if (version == 0) return kInvalidValue;
  *version = GCR_STUB_CUDA_VERSION;
  return kSuccess;
}

static int count_device_nodes(void) {
  DIR* dev = opendir("/dev");
  struct dirent* e;
  int count = 0;
  if (dev == NULL) return 0;
  while ((e = readdir(dev)) != NULL) {
    const char* digits = e->d_name + 6;
    if (strncmp(e->d_name, "nvidia", 6) == 0 && *digits != '\0' &&
        strspn(digits, "0123456789") == strlen(digits))
      ++count;
  }
  closedir(dev);
  return count;
}

static int mps_reachable(const char* pipe) {
  struct sockaddr_un address;
  int fd;
  int ok;
  memset(&address, 0, sizeof address);
  address.sun_family = AF_UNIX;
  if ((size_t)snprintf(address.sun_path, sizeof address.sun_path, "%s/control", pipe) >=
      sizeof address.sun_path)
    return 0;
  fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0); /* as the daemon serves it */
  if (fd < 0) return 0;
  ok = connect(fd, (struct sockaddr*)&address, sizeof address) == 0;
  close(fd);
  return ok;
}

int cuInit(unsigned flags) {
  const char* pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
  if (flags != 0) return kInvalidValue;
  devices = count_device_nodes();
  if (devices == 0) return kNoDevice;
  if (pipe != NULL && !mps_reachable(pipe)) return kMpsConnectionFailed;
  initialized = 1;
  return kSuccess;
}

int cuDeviceGetCount(int* count) {
  if (!initialized) return kNotInitialized;
  *count = devices;
  return kSuccess;
}

int cuDeviceGet(int* device, int ordinal) {
  if (!initialized) return kNotInitialized;
  if (ordinal < 0 || ordinal >= devices) return kInvalidValue;
  *device = ordinal;
  return kSuccess;
}

int cuDeviceGetName(char* name, int length, int device) {
  if (!initialized) return kNotInitialized;
  if (device < 0 || device >= devices || length < 1) return kInvalidValue;
  snprintf(name, (size_t)length, "%s", "NVIDIA A100-SXM4-40GB");
  return kSuccess;
}

/* Under MPS, the share of the SMs the thread percentage gives (at least one). */
static int visible_sms(void) {
  const char* pct = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  int sms = kSms;
  if (getenv("CUDA_MPS_PIPE_DIRECTORY") != NULL && pct != NULL && atoi(pct) > 0 && atoi(pct) < 100)
    sms = kSms * atoi(pct) / 100;
  return sms > 0 ? sms : 1;
}

/* Under MPS, "0=<n>M": the pinned-memory limit of device 0. */
static unsigned long long visible_mib(void) {
  const char* limit = getenv("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
  unsigned long long mib = 0;
  if (getenv("CUDA_MPS_PIPE_DIRECTORY") != NULL && limit != NULL &&
      sscanf(limit, "0=%lluM", &mib) == 1 && mib > 0 && mib < kMemoryMib)
    return mib;
  return kMemoryMib;
}

int cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (!initialized) return kNotInitialized;
  if (device < 0 || device >= devices) return kInvalidValue;
  *value = attribute == 16 /* MULTIPROCESSOR_COUNT */ ? visible_sms() : 0;
  return kSuccess;
}

int cuDeviceTotalMem_v2(size_t* bytes, int device) {
  if (!initialized) return kNotInitialized;
  if (device < 0 || device >= devices) return kInvalidValue;
  *bytes = (size_t)(kMemoryMib << 20);
  return kSuccess;
}

int cuCtxCreate_v2(void** context, unsigned flags, int device) {
  static int the_context;
  (void)flags;
  if (!initialized) return kNotInitialized;
  if (device < 0 || device >= devices) return kInvalidValue;
  *context = &the_context;
  return kSuccess;
}

int cuCtxDestroy_v2(void* context) {
  (void)context;
  return kSuccess;
}

int cuCtxSynchronize(void) {
  return initialized ? kSuccess : kNotInitialized;
}

int cuMemGetInfo_v2(size_t* free_bytes, size_t* total) {
  if (!initialized) return kNotInitialized;
  *total = (size_t)(visible_mib() << 20);
  *free_bytes = *total - (size_t)allocated;
  return kSuccess;
}

/* Device memory is the host's: only the bookkeeping of the limit is the driver's. */
int cuMemAlloc_v2(uint64_t* pointer, size_t bytes) {
  int slot = 0;
  if (!initialized) return kNotInitialized;
  if (bytes == 0) return kInvalidValue;
  if (allocated + bytes > visible_mib() << 20) return kOutOfMemory;
  while (slot < kMaxBlocks && blocks[slot].block != NULL) ++slot;
  if (slot == kMaxBlocks) return kOutOfMemory;
  blocks[slot].block = calloc(1, bytes);
  if (blocks[slot].block == NULL) return kOutOfMemory;
  blocks[slot].bytes = bytes;
  allocated += bytes;
  *pointer = (uint64_t)(uintptr_t)blocks[slot].block;
  return kSuccess;
}

int cuMemFree_v2(uint64_t pointer) {
  for (int slot = 0; slot < kMaxBlocks; ++slot) {
    if (blocks[slot].block == NULL || (uint64_t)(uintptr_t)blocks[slot].block != pointer) continue;
    free(blocks[slot].block);
    blocks[slot].block = NULL;
    allocated -= blocks[slot].bytes;
    return kSuccess;
  }
  return kInvalidValue;
}

int cuMemcpyDtoH_v2(void* to, uint64_t from, size_t bytes) {
  memcpy(to, (const void*)(uintptr_t)from, bytes);
  return kSuccess;
}

static int the_module;
static int the_function;

int cuModuleLoadData(void** module, const void* image) {
  const char* ptx = image;
  if (!initialized) return kNotInitialized;
  if (ptx == NULL || strstr(ptx, ".version") == NULL || strstr(ptx, ".entry") == NULL)
    return kInvalidImage;
  *module = &the_module;
  return kSuccess;
}

int cuModuleGetFunction(void** function, void* module, const char* name) {
  if (module != &the_module) return kInvalidValue;
  if (strcmp(name, "gcr_probe") != 0) return kNotFound;
  *function = &the_function;
  return kSuccess;
}

int cuLaunchKernel(void* function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                   unsigned block_x, unsigned block_y, unsigned block_z, unsigned shared,
                   void* stream, void** params, void** extra) {
  uint32_t* out;
  unsigned n;
  unsigned seed;
  unsigned threads = grid_x * grid_y * grid_z * block_x * block_y * block_z;
  (void)shared, (void)stream, (void)extra;
  if (function != &the_function || params == NULL) return kInvalidValue;
  const uint64_t address = *(const uint64_t*)params[0];
  out = (uint32_t*)(uintptr_t)address;
  n = *(unsigned*)params[1];
  seed = *(unsigned*)params[2];
  for (unsigned i = 0; i < n && i < threads; ++i) out[i] = i * seed + 1;
  return kSuccess;
}

int cuGetErrorName(int error, const char** name) {
  switch (error) {
    case kNoDevice:
      *name = "CUDA_ERROR_NO_DEVICE";
      return kSuccess;
    case kMpsConnectionFailed:
      *name = "CUDA_ERROR_MPS_CONNECTION_FAILED";
      return kSuccess;
    default:
      *name = "CUDA_ERROR_UNKNOWN";
      return kSuccess;
  }
}

int cuGetErrorString(int error, const char** text) {
  *text = error == kNoDevice ? "no CUDA-capable device is detected" : "unknown error";
  return kSuccess;
}
