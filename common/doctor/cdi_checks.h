// CDI specs in [cdi] spec-dirs: each one valid and trusted (root-owned, not group or world
// writable), and made for the driver loaded now (every host file it names exists, and its
// versioned libraries carry the loaded version).
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

void check_cdi(const Config& config, const std::optional<std::string>& driver_version,
               Findings& findings);

// The driver version a host file name carries ("libcuda.so.550.54.15" -> "550.54.15"), if any.
[[nodiscard]] std::optional<std::string> library_version_of(const std::string& path);

}  // namespace gcr
