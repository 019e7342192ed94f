// Finding and reading the configuration file (TOML or JSON, same keys).
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "config/config.h"

namespace gcr {

inline constexpr const char* kConfigEnvVar = "GPU_CONTAINER_RUNTIME_CONFIG";
inline constexpr const char* kDefaultConfigDir = "/etc/gpu-container-runtime";

// Reads one file; its extension (.toml or .json) picks the syntax. Errors name the file.
[[nodiscard]] Result<Config> load_config_file(const std::string& path);

// The configuration in effect: `explicit_path` if given (a missing file is an error), else
// <config_dir>/config.toml, else <config_dir>/config.json, else built-in defaults.
[[nodiscard]] Result<Config> load_config(const std::optional<std::string>& explicit_path,
                                         const std::string& config_dir = kDefaultConfigDir);

// The explicit path the environment asks for ($GPU_CONTAINER_RUNTIME_CONFIG), if any.
[[nodiscard]] std::optional<std::string> config_path_from_env();

}  // namespace gcr
