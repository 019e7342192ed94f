/* gpu-cuda-probe: what `gpu-ctk doctor --run` runs inside its test container. It loads the
 * libcuda the runtime injected (through the container's loader, as an application would),
 * JIT-compiles a small PTX kernel, runs it, checks every answer, allocates device memory, and
 * prints one line per step:
 *   ok    <step>: <what it saw>
 *   FAIL  <step>: <why>
 * and exits 1 at the first failure. Under MPS it also prints the limits the client got (the
 * SMs and memory the driver shows it, and the MPS variables of its environment). It uses only
 * the driver API, resolved with dlsym, so it needs no CUDA toolkit and links only glibc. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef void* CUcontext;
typedef void* CUmodule;
typedef void* CUfunction;
typedef unsigned long long CUdeviceptr;

enum { kSmCountAttribute = 16 /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */ };
enum { kElements = 4096, kThreads = 256 };
static const unsigned long long kAllocateBytes = 256ull << 20;
static const unsigned kSeed = 7;

/* out[i] = i * seed + 1, for i < n: one thread per element. */
static const char kPtx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry gcr_probe(.param .u64 out, .param .u32 n, .param .u32 seed)\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<8>;\n"
    "  .reg .b64 %rd<5>;\n"
    "  ld.param.u64 %rd1, [out];\n"
    "  ld.param.u32 %r1, [n];\n"
    "  ld.param.u32 %r2, [seed];\n"
    "  mov.u32 %r3, %ctaid.x;\n"
    "  mov.u32 %r4, %ntid.x;\n"
    "  mov.u32 %r5, %tid.x;\n"
    "  mad.lo.s32 %r6, %r3, %r4, %r5;\n"
    "  setp.ge.u32 %p1, %r6, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  mad.lo.s32 %r7, %r6, %r2, 1;\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n"
    "  mul.wide.u32 %rd3, %r6, 4;\n"
    "  add.s64 %rd4, %rd2, %rd3;\n"
    "  st.global.u32 [%rd4], %r7;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n";

typedef struct {
  CUresult (*init)(unsigned);
  CUresult (*driver_version)(int*);
  CUresult (*device_count)(int*);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*device_name)(char*, int, CUdevice);
  CUresult (*device_attribute)(int*, int, CUdevice);
  CUresult (*device_total_mem)(size_t*, CUdevice);
  CUresult (*ctx_create)(CUcontext*, unsigned, CUdevice);
  CUresult (*ctx_destroy)(CUcontext);
  CUresult (*mem_get_info)(size_t*, size_t*);
  CUresult (*module_load_data)(CUmodule*, const void*);
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*);
  CUresult (*mem_alloc)(CUdeviceptr*, size_t);
  CUresult (*mem_free)(CUdeviceptr);
  CUresult (*memcpy_dtoh)(void*, CUdeviceptr, size_t);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, void*, void**, void**);
  CUresult (*synchronize)(void);
  CUresult (*error_name)(CUresult, const char**);
  CUresult (*error_string)(CUresult, const char**);
} Cuda;

static Cuda cuda;

static int fail(const char* step, const char* why) {
  printf("FAIL  %s: %s\n", step, why);
  return 1;
}

/* A driver call's result: 0 when it succeeded, else the FAIL line with the driver's words. */
static int check(const char* step, CUresult result) {
  const char* name = NULL;
  const char* text = NULL;
  char why[512];
  if (result == 0) return 0;
  if (cuda.error_name == NULL || cuda.error_name(result, &name) != 0) name = NULL;
  if (cuda.error_string == NULL || cuda.error_string(result, &text) != 0) text = NULL;
  snprintf(why, sizeof why, "%s (error %d)%s%s", name ? name : "CUDA error", result,
           text ? ": " : "", text ? text : "");
  return fail(step, why);
}

static void* symbol(void* lib, const char* name, int* missing) {
  void* found = dlsym(lib, name);
  if (found == NULL) {
    char why[256];
    snprintf(why, sizeof why, "libcuda has no %s", name);
    fail("libcuda", why);
    *missing = 1;
  }
  return found;
}

static int load_cuda(void) {
  int missing = 0;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    const char* why = dlerror();
    return fail("libcuda", why ? why : "cannot load libcuda.so.1");
  }
#define LOAD(field, name) *(void**)(&cuda.field) = symbol(lib, name, &missing)
  LOAD(init, "cuInit");
  LOAD(driver_version, "cuDriverGetVersion");
  LOAD(device_count, "cuDeviceGetCount");
  LOAD(device_get, "cuDeviceGet");
  LOAD(device_name, "cuDeviceGetName");
  LOAD(device_attribute, "cuDeviceGetAttribute");
  LOAD(device_total_mem, "cuDeviceTotalMem_v2");
  LOAD(ctx_create, "cuCtxCreate_v2");
  LOAD(ctx_destroy, "cuCtxDestroy_v2");
  LOAD(mem_get_info, "cuMemGetInfo_v2");
  LOAD(module_load_data, "cuModuleLoadData");
  LOAD(module_get_function, "cuModuleGetFunction");
  LOAD(mem_alloc, "cuMemAlloc_v2");
  LOAD(mem_free, "cuMemFree_v2");
  LOAD(memcpy_dtoh, "cuMemcpyDtoH_v2");
  LOAD(launch, "cuLaunchKernel");
  LOAD(synchronize, "cuCtxSynchronize");
  LOAD(error_name, "cuGetErrorName");
  LOAD(error_string, "cuGetErrorString");
#undef LOAD
  return missing;
}

static int describe_device(CUdevice* device) {
  int version = 0;
  int count = 0;
  int sms = 0;
  size_t total = 0;
  char name[256] = "";
  if (check("cuInit", cuda.init(0)) || check("driver", cuda.driver_version(&version)) ||
      check("devices", cuda.device_count(&count)))
    return 1;
  printf("ok    libcuda: loaded, CUDA %d.%d, %d device%s\n", version / 1000, version % 1000 / 10,
         count, count == 1 ? "" : "s");
  if (count < 1) return fail("devices", "the driver shows this container no GPU");
  if (check("device", cuda.device_get(device, 0)) ||
      check("device", cuda.device_name(name, (int)sizeof name - 1, *device)) ||
      check("device", cuda.device_attribute(&sms, kSmCountAttribute, *device)) ||
      check("device", cuda.device_total_mem(&total, *device)))
    return 1;
  printf("ok    device: %s, %d SMs, %llu MiB\n", name, sms, (unsigned long long)(total >> 20));
  return 0;
}

static int run_kernel(void) {
  CUmodule module = NULL;
  CUfunction function = NULL;
  CUdeviceptr out = 0;
  static unsigned results[kElements];
  unsigned n = kElements;
  unsigned seed = kSeed;
  void* params[] = {&out, &n, &seed};
  if (check("ptx", cuda.module_load_data(&module, kPtx)) ||
      check("ptx", cuda.module_get_function(&function, module, "gcr_probe")))
    return 1;
  printf("ok    ptx: the kernel compiled just in time\n");
  if (check("kernel", cuda.mem_alloc(&out, sizeof results)) ||
      check("kernel", cuda.launch(function, kElements / kThreads, 1, 1, kThreads, 1, 1, 0, NULL,
                                  params, NULL)) ||
      check("kernel", cuda.synchronize()) ||
      check("kernel", cuda.memcpy_dtoh(results, out, sizeof results)))
    return 1;
  cuda.mem_free(out);
  for (unsigned i = 0; i < kElements; ++i) {
    if (results[i] != i * kSeed + 1) {
      char why[128];
      snprintf(why, sizeof why, "element %u is %u, not %u", i, results[i], i * kSeed + 1);
      return fail("kernel", why);
    }
  }
  printf("ok    kernel: %d results checked\n", kElements);
  return 0;
}

static int allocate(void) {
  CUdeviceptr block = 0;
  size_t free_bytes = 0;
  size_t total = 0;
  if (check("memory", cuda.mem_alloc(&block, kAllocateBytes))) return 1;
  cuda.mem_free(block);
  if (check("memory", cuda.mem_get_info(&free_bytes, &total))) return 1;
  printf("ok    memory: allocated %llu MiB; %llu of %llu MiB free\n", kAllocateBytes >> 20,
         (unsigned long long)(free_bytes >> 20), (unsigned long long)(total >> 20));
  return 0;
}

/* Under MPS: the limits the client got, as the driver shows them and as its environment asks. */
static void print_mps(CUdevice device) {
  const char* pipe = getenv("CUDA_MPS_PIPE_DIRECTORY");
  const char* threads = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
  const char* memory = getenv("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT");
  int sms = 0;
  size_t free_bytes = 0;
  size_t total = 0;
  if (pipe == NULL) return;
  cuda.device_attribute(&sms, kSmCountAttribute, device);
  cuda.mem_get_info(&free_bytes, &total);
  printf(
      "ok    mps: a client of the daemon in %s: %d SMs, %llu MiB of memory "
      "(CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%s, CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=%s)\n",
      pipe, sms, (unsigned long long)(total >> 20), threads ? threads : "unset",
      memory ? memory : "unset");
}

int main(void) {
  CUdevice device = 0;
  CUcontext context = NULL;
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (load_cuda() || describe_device(&device) ||
      check("context", cuda.ctx_create(&context, 0, device)) || run_kernel() || allocate())
    return 1;
  print_mps(device);
  cuda.ctx_destroy(context);
  return 0;
}
