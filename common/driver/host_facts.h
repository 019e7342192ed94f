// What tools print about the host's driver: its version, the CUDA version libcuda reports, the
// GPUs, and what NVML adds per GPU (architecture, brand, MIG devices). gpu-ctk info,
// nvidia-container-cli info and gpu-ctk doctor share it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "driver/host.h"
#include "driver/probe.h"

namespace gcr {

struct HostFacts {
  std::string version;
  std::vector<Gpu> gpus;
  std::optional<std::string> cuda;          // none when libcuda could not be asked
  std::map<std::string, GpuFacts> per_gpu;  // by UUID; empty when NVML could not be asked
  std::vector<std::string> warnings;        // why libcuda or NVML gave nothing
};

struct HostFactsQuery {
  bool cuda = true;  // load libcuda and ask it
  bool nvml = true;  // load NVML and ask it
};

// The driver's version and GPUs are required (an error without them); libcuda's and NVML's
// answers are optional, a warning each when they cannot be had.
[[nodiscard]] Result<HostFacts> gather_host_facts(DriverHost& host, const HostFactsQuery& query);

// The host path of the 64-bit driver library `prefix` ("libcuda.so") of capability `cap`.
[[nodiscard]] std::optional<std::string> driver_library_path(DriverHost& host, Capability cap,
                                                             const std::string& prefix);

// What a loaded driver library answered, and from where ("" when there was no such library).
template <typename T>
struct LibraryAnswer {
  std::string path;
  Result<T> answer;
  // The library loaded but says the kernel module is missing or of another version.
  bool kernel_driver = false;
};

// libcuda's CUDA version / NVML's per-GPU facts, from the driver of `version`; an error says
// the library is missing ("no libcuda.so.<version> in the driver root") or why it did not answer.
[[nodiscard]] LibraryAnswer<std::string> ask_libcuda(DriverHost& host, const std::string& version);
[[nodiscard]] LibraryAnswer<std::map<std::string, GpuFacts>> ask_nvml(DriverHost& host,
                                                                      const std::vector<Gpu>& gpus,
                                                                      const std::string& version);

}  // namespace gcr
