#include "driver/host_facts.h"

#include "driver/libs.h"

namespace gcr {

std::optional<std::string> driver_library_path(DriverHost& host, Capability cap,
                                               const std::string& prefix) {
  CapabilitySet caps;
  caps.add(cap);
  auto libs = host.libraries(caps, LibArch::k64);
  if (!libs) return std::nullopt;
  for (const auto& lib : *libs) {
    if (lib.prefix == prefix) return lib.host_path;
  }
  return std::nullopt;
}

Result<HostFacts> gather_host_facts(DriverHost& host, const HostFactsQuery& query) {
  HostFacts facts;
  auto version = host.version();
  if (!version) return version.error();
  auto gpus = host.gpus();
  if (!gpus) return gpus.error();
  facts.version = *version;
  facts.gpus = *gpus;
  if (query.cuda) {
    const auto path = driver_library_path(host, Capability::kCompute, "libcuda.so");
    auto cuda = path ? cuda_driver_version(*path)
                     : Result<std::string>(Error{"no libcuda." + *version + " in the driver root"});
    if (cuda)
      facts.cuda = *cuda;
    else
      facts.warnings.push_back(cuda.error().message);
  }
  if (query.nvml) {
    const auto path = driver_library_path(host, Capability::kUtility, "libnvidia-ml.so");
    auto per_gpu = path ? nvml_gpu_facts(*path, facts.gpus)
                        : Result<std::map<std::string, GpuFacts>>(
                              Error{"no libnvidia-ml." + *version + " in the driver root"});
    if (per_gpu)
      facts.per_gpu = *per_gpu;
    else
      facts.warnings.push_back(per_gpu.error().message);
  }
  return facts;
}

}  // namespace gcr
