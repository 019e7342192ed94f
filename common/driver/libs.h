// Asking the driver's own user-space libraries: libcuda for the CUDA driver version, NVML
// for each GPU's compute capability and brand. Used by `gpu-ctk info` only: loading driver
// libraries needs the dynamic loader, which the static shim does not have.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "driver/device_nodes.h"
#include "driver/probe.h"

namespace gcr {

// dlopen()s `libcuda_path` and calls cuDriverGetVersion: "12.4".
[[nodiscard]] Result<std::string> cuda_driver_version(const std::string& libcuda_path);

// dlopen()s `nvml_path`, initialises NVML once and reads each GPU: facts by GPU UUID. A failed
// nvmlInit's status is stored in `init_status` when given.
[[nodiscard]] Result<std::map<std::string, GpuFacts>> nvml_gpu_facts(const std::string& nvml_path,
                                                                     const std::vector<Gpu>& gpus,
                                                                     int* init_status = nullptr);

}  // namespace gcr
