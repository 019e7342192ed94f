// The driver as containers will get it: the kernel module, every GPU's device node, the control
// and UVM nodes, libcuda (and the CUDA version it reports), NVML, the persistenced socket.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

// The loaded driver's version when the module answers (CDI specs are checked against it).
[[nodiscard]] std::optional<std::string> check_driver(const Config& config, Findings& findings);

}  // namespace gcr
