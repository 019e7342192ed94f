// Checking a container's NVIDIA_REQUIRE_* requirements against the host.
#pragma once

#include <string>
#include <vector>

#include "driver_host.h"
#include "driver_probe.h"
#include "requirement.h"
#include "result.h"

namespace gcr {

// Every requirement must hold for every selected GPU (once, without GPU facts, when none is
// selected). The probe is asked only for facts some requirement mentions. The error names
// the requirement, where it came from and the host's values.
[[nodiscard]] Status check_requirements(const std::vector<Requirement>& requirements,
                                        const std::vector<Gpu>& selected,
                                        const std::string& driver_version, DriverProbe& probe);

}  // namespace gcr
