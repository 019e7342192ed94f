// Our own side: the configuration file parses, the low-level runtime resolves and runs, the
// ldconfig the hook runs is a static host binary, the gpu-ctk the hooks name exists.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

// The configuration in effect (the built-in defaults after a FAIL, so the other checks run).
[[nodiscard]] Config check_config(const std::optional<std::string>& path, Findings& findings);

// The low-level runtime it found (for --run), when one resolves.
[[nodiscard]] std::optional<std::string> check_runtime(const Config& config, Findings& findings);

}  // namespace gcr
