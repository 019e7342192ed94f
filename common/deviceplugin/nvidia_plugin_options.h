// NVIDIA's device plugin is configured by flags and environment variables (MIG_STRATEGY,
// DEVICE_LIST_STRATEGY, ...); ours by the runtime's configuration file. A DaemonSet moved
// from NVIDIA's plugin to ours keeps them: a flag is refused and a variable is named, each
// with the key of ours that means the same, so no setting is lost without a word.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gcr {

// The refusal of `arg` when it is one of NVIDIA's plugin's flags (`--mig-strategy` or
// `--mig-strategy=mixed`), nullopt for any other argument.
[[nodiscard]] std::optional<std::string> nvidia_plugin_flag_refusal(const std::string& arg);

// A line for each of NVIDIA's plugin's variables set to a non-empty value, read through `env`
// (getenv's seam): its value and the key of ours to set instead, in `config_source`.
[[nodiscard]] std::vector<std::string> nvidia_plugin_env_warnings(
    const std::function<std::optional<std::string>(const std::string&)>& env,
    const std::string& config_source);

}  // namespace gcr
