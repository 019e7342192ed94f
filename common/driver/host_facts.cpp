#include "driver/host_facts.h"

#include "driver/libs.h"
#include "driver/nvml.h"

namespace gcr {

std::optional<std::string> driver_library_path(DriverHost& host, Capability cap,
                                               const std::string& prefix) {
  CapabilitySet caps;
  caps.add(cap);
  auto libs = host.files().libraries(caps, LibArch::k64);
  if (!libs) return std::nullopt;
  for (const auto& lib : *libs) {
    if (lib.prefix == prefix) return lib.host_path;
  }
  return std::nullopt;
}

namespace {

// "no libcuda.so.<version> in the driver root", with the reason discovery gave for refusing
// one if it noted any.
std::string missing_library(const DriverHost& host, const std::string& prefix,
                            const std::string& version) {
  const std::string why = "no " + prefix + "." + version + " in the driver root";
  const auto refused = host.files().refusal(prefix);
  return refused ? why + ": " + *refused : why;
}

}  // namespace

LibraryAnswer<std::string> ask_libcuda(DriverHost& host, const std::string& version) {
  const auto path = driver_library_path(host, Capability::kCompute, "libcuda.so");
  if (!path) return {"", Error{missing_library(host, "libcuda.so", version)}};
  return {*path, cuda_driver_version(*path)};
}

LibraryAnswer<std::map<std::string, GpuFacts>> ask_nvml(DriverHost& host,
                                                        const std::vector<Gpu>& gpus,
                                                        const std::string& version) {
  const auto path = driver_library_path(host, Capability::kUtility, "libnvidia-ml.so");
  if (!path) return {"", Error{missing_library(host, "libnvidia-ml.so", version)}};
  int init_status = 0;
  auto facts = nvml_gpu_facts(*path, gpus, &init_status);
  return {*path, std::move(facts), nvml_kernel_driver_failure(init_status)};
}

Result<HostFacts> gather_host_facts(DriverHost& host, const HostFactsQuery& query) {
  HostFacts facts;
  auto version = host.devices().version();
  if (!version) return version.error();
  auto gpus = host.devices().gpus();
  if (!gpus) return gpus.error();
  facts.version = *version;
  facts.gpus = *gpus;
  if (query.cuda) {
    auto cuda = ask_libcuda(host, *version).answer;
    if (cuda)
      facts.cuda = *cuda;
    else
      facts.warnings.push_back(cuda.error().message);
  }
  if (query.nvml) {
    auto per_gpu = ask_nvml(host, facts.gpus, *version).answer;
    if (per_gpu)
      facts.per_gpu = *per_gpu;
    else
      facts.warnings.push_back(per_gpu.error().message);
  }
  return facts;
}

}  // namespace gcr
