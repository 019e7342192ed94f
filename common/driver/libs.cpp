#include "driver/libs.h"

#include <dlfcn.h>

#include <cstdio>

#include "driver/nvml.h"

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

}  // namespace

Result<std::string> cuda_driver_version(const std::string& libcuda_path) {
  Library lib(libcuda_path);
  if (!lib.loaded()) return Error{"cannot load libcuda: " + dl_error()};
  const auto get_version = lib.symbol<int (*)(int*)>("cuDriverGetVersion");
  if (get_version == nullptr)
    return Error{"libcuda has no cuDriverGetVersion (" + libcuda_path + ")"};
  int version = 0;
  if (const int status = get_version(&version); status != 0 || version <= 0) {
    const auto error_string = lib.symbol<int (*)(int, const char**)>("cuGetErrorString");
    const char* words = nullptr;
    if (error_string == nullptr || error_string(status, &words) != 0) words = nullptr;
    return Error{"cuDriverGetVersion failed: " + std::string(words != nullptr ? words : "error") +
                 ", CUDA status " + std::to_string(status) + " (" + libcuda_path + ")"};
  }
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

Result<std::map<std::string, GpuFacts>> nvml_gpu_facts(const std::string& nvml_path,
                                                       const std::vector<Gpu>& gpus,
                                                       int* init_status) {
  auto nvml = Nvml::open(nvml_path, init_status);
  if (!nvml) return nvml.error();
  std::map<std::string, GpuFacts> out;
  for (const auto& gpu : gpus) {
    if (!gpu.uuid_known()) continue;  // its facts unknown, not another such GPU's
    GpuFacts& facts = out[gpu.uuid];
    facts.arch = (*nvml)->arch(gpu.bus);
    facts.brand = (*nvml)->brand(gpu.bus);
    facts.migs = (*nvml)->mig_devices(gpu.bus);
  }
  return out;
}

}  // namespace gcr
