// NVIDIA's /etc/nvidia-container-runtime/config.toml read as ours: every key it sets becomes
// the key of ours that means the same, or a comment saying why nothing does.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"

namespace gcr {

inline constexpr const char* kNvidiaConfigPath = "/etc/nvidia-container-runtime/config.toml";
// The most of NVIDIA's file read (its own is a few KiB).
inline constexpr std::size_t kMaxNvidiaConfigBytes = 1 << 20;

struct ImportedConfig {
  Config config;     // what the result means, checked as any configuration file is
  std::string toml;  // our configuration file, each key commented with NVIDIA's it came from
  std::vector<std::string> not_carried;  // "key: why", for keys with no equivalent
  Json keys;                             // the keys of ours it sets: {"table": {"key": value}}
};

// `text` is NVIDIA's file, `source` its path (for messages). Malformed TOML is an error with
// the line number; a key of ours whose value cannot be carried over (a capability we do not
// know, a relative path) is an error naming NVIDIA's key.
[[nodiscard]] Result<ImportedConfig> import_nvidia_config(const std::string& text,
                                                          const std::string& source);

// `nvidia-ctk config --set KEY[=VALUE]` settings as the text of NVIDIA's file that holds them,
// each value typed as NVIDIA's --set types it: none is true, true/false/1/0/t/f a boolean, a
// list key's value split at commas, anything else a string; a key set twice, the last. A key
// that is no dotted name of letters, digits, '-' and '_' is an error.
[[nodiscard]] Result<std::string> nvidia_settings_toml(const std::vector<std::string>& settings);

}  // namespace gcr
