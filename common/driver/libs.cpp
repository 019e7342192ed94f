#include "driver/libs.h"

#include <dlfcn.h>

#include <cstdio>

namespace gcr {
namespace {

class Library {
 public:
  explicit Library(const std::string& path)
      : handle_(::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle_ != nullptr) ::dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  [[nodiscard]] bool loaded() const { return handle_ != nullptr; }
  template <class Fn>
  [[nodiscard]] Fn symbol(const char* name) const {
    return reinterpret_cast<Fn>(::dlsym(handle_, name));
  }

 private:
  void* handle_;
};

std::string dl_error() {
  const char* e = ::dlerror();
  return e != nullptr ? e : "unknown dlopen error";
}

// NVML's brand enumeration, named as libnvidia-container names them.
std::string brand_name(int brand) {
  static const char* names[] = {"Unknown",    "Quadro",      "Tesla",     "NVS",       "GRID",
                                "GeForce",    "TITAN",       "VApps",     "VPC",       "VCS",
                                "VWS",        "CloudGaming", "QuadroRTX", "NvidiaRTX", "Nvidia",
                                "GeForceRTX", "TitanRTX"};
  return brand >= 0 && brand < static_cast<int>(sizeof names / sizeof names[0]) ? names[brand]
                                                                                : "Unknown";
}

struct MigFunctions {
  int (*max_count)(void*, unsigned*);
  int (*by_index)(void*, unsigned, void**);
  int (*uuid)(void*, char*, unsigned);
  int (*gpu_instance)(void*, unsigned*);
  int (*compute_instance)(void*, unsigned*);
};

// The MIG devices of a GPU by NVML index (empty slots skipped, indices kept as NVML has them).
std::vector<MigDevice> mig_devices(const MigFunctions& f, void* device) {
  std::vector<MigDevice> out;
  unsigned max = 0;
  if (!f.max_count || !f.by_index || !f.uuid || !f.gpu_instance || !f.compute_instance ||
      f.max_count(device, &max) != 0) {
    return out;
  }
  for (unsigned i = 0; i < max && i < 64; ++i) {
    void* mig = nullptr;
    if (f.by_index(device, i, &mig) != 0) continue;
    char uuid[96] = {};
    MigDevice m;
    m.index = i;
    if (f.uuid(mig, uuid, sizeof uuid) != 0 || f.gpu_instance(mig, &m.gpu_instance) != 0 ||
        f.compute_instance(mig, &m.compute_instance) != 0) {
      continue;
    }
    m.uuid = uuid;
    out.push_back(m);
  }
  return out;
}

}  // namespace

Result<std::string> cuda_driver_version(const std::string& libcuda_path) {
  Library lib(libcuda_path);
  if (!lib.loaded()) return Error{"cannot load libcuda: " + dl_error()};
  const auto get_version = lib.symbol<int (*)(int*)>("cuDriverGetVersion");
  if (get_version == nullptr)
    return Error{"libcuda has no cuDriverGetVersion (" + libcuda_path + ")"};
  int version = 0;
  if (get_version(&version) != 0 || version <= 0)
    return Error{"cuDriverGetVersion failed (" + libcuda_path + ")"};
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

Result<std::map<std::string, GpuFacts>> nvml_gpu_facts(const std::string& nvml_path,
                                                       const std::vector<Gpu>& gpus) {
  Library lib(nvml_path);
  if (!lib.loaded()) return Error{"cannot load NVML: " + dl_error()};
  const auto init = lib.symbol<int (*)()>("nvmlInit_v2");
  const auto shutdown = lib.symbol<int (*)()>("nvmlShutdown");
  const auto by_bus = lib.symbol<int (*)(const char*, void**)>("nvmlDeviceGetHandleByPciBusId_v2");
  const auto capability =
      lib.symbol<int (*)(void*, int*, int*)>("nvmlDeviceGetCudaComputeCapability");
  const auto brand = lib.symbol<int (*)(void*, int*)>("nvmlDeviceGetBrand");
  if (!init || !shutdown || !by_bus || !capability || !brand)
    return Error{"NVML lacks a needed function (" + nvml_path + ")"};
  if (init() != 0) return Error{"nvmlInit failed (" + nvml_path + ")"};
  const MigFunctions mig{
      lib.symbol<int (*)(void*, unsigned*)>("nvmlDeviceGetMaxMigDeviceCount"),
      lib.symbol<int (*)(void*, unsigned, void**)>("nvmlDeviceGetMigDeviceHandleByIndex"),
      lib.symbol<int (*)(void*, char*, unsigned)>("nvmlDeviceGetUUID"),
      lib.symbol<int (*)(void*, unsigned*)>("nvmlDeviceGetGpuInstanceId"),
      lib.symbol<int (*)(void*, unsigned*)>("nvmlDeviceGetComputeInstanceId")};
  std::map<std::string, GpuFacts> out;
  for (const auto& gpu : gpus) {
    char bus_id[32];
    std::snprintf(bus_id, sizeof bus_id, "%08x:%02x:%02x.%x", gpu.bus.domain, gpu.bus.bus,
                  gpu.bus.device, gpu.bus.function);
    void* device = nullptr;
    if (by_bus(bus_id, &device) != 0) continue;
    GpuFacts& facts = out[gpu.uuid];
    int major = 0, minor = 0, b = 0;
    if (capability(device, &major, &minor) == 0)
      facts.arch = std::to_string(major) + "." + std::to_string(minor);
    if (brand(device, &b) == 0) facts.brand = brand_name(b);
    facts.migs = mig_devices(mig, device);
  }
  shutdown();
  return out;
}

}  // namespace gcr
