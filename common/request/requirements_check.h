// Checking a container's NVIDIA_REQUIRE_* requirements against the host.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "driver/device_nodes.h"
#include "driver/probe.h"
#include "request/requirement.h"

namespace gcr {

// Every requirement must hold for every selected GPU (once, without GPU facts, when none is
// selected). libcuda is asked only when a requirement mentions cuda, NVML only when the
// outcome depends on arch or brand. An unknown driver version (no driver) counts as met, as
// every unknown fact does. The error names the requirement, its variable and the host's values.
[[nodiscard]] Status check_requirements(const std::vector<Requirement>& requirements,
                                        const std::vector<Gpu>& selected,
                                        const std::optional<std::string>& driver_version,
                                        DriverProbe& probe);

}  // namespace gcr
