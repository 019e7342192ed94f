// CDI specs in [cdi] spec-dirs: each one the runtime would use (valid, trusted file and
// directory, no conflicting devices), and made for the driver loaded now (every host file it names
// exists, and its versioned libraries carry the loaded version).
#pragma once

#include <optional>
#include <string>

#include "cdi/registry.h"
#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

// `registry` is [cdi] spec-dirs as the runtime loads them (load_cdi_registry).
void check_cdi(const Config& config, const CdiRegistry& registry,
               const std::optional<std::string>& driver_version, Findings& findings);

// The driver version a host file name carries ("libcuda.so.550.54.15" -> "550.54.15"), if any.
[[nodiscard]] std::optional<std::string> library_version_of(const std::string& path);

}  // namespace gcr
