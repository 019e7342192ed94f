// gpu-ctk: the administration tool (config, hooks, CDI, engine set-up) and the hook binary.
#pragma once

#include <string>
#include <vector>

namespace gcr {

// One `gpu-ctk <name> ...` command; `args` excludes the command name.
struct CtkCommand {
  const char* name;
  const char* summary;
  int (*run)(const std::vector<std::string>& args);
};

// `program` is argv[0] (the tool dispatches on the name it was invoked by: gpu-ctk, nvidia-ctk,
// nvidia-container-cli, nvidia-container-runtime-hook), `args` argv[1..].
[[nodiscard]] int run_ctk(const std::string& program, const std::vector<std::string>& args);

// `--<flag>=` for each of `flags` (an empty value, which NVIDIA's flags take) as `--<flag> ""`,
// which Boost.Program_options reads; every other argument as it is.
[[nodiscard]] std::vector<std::string> with_empty_values(const std::vector<std::string>& args,
                                                         const std::vector<std::string>& flags);

// Commands, one file each.
[[nodiscard]] int ctk_config(const std::vector<std::string>& args);
[[nodiscard]] int ctk_info(const std::vector<std::string>& args);
[[nodiscard]] int ctk_hook(const std::vector<std::string>& args);
[[nodiscard]] int ctk_cdi(const std::vector<std::string>& args);
[[nodiscard]] int ctk_runtime(const std::vector<std::string>& args);
[[nodiscard]] int ctk_doctor(const std::vector<std::string>& args);
[[nodiscard]] int ctk_labels(const std::vector<std::string>& args);
[[nodiscard]] int ctk_system(const std::vector<std::string>& args);

// argv[0] nvidia-container-runtime-hook (or nvidia-container-toolkit).
[[nodiscard]] int legacy_nvidia_hook(const std::vector<std::string>& args);
// argv[0] nvidia-container-cli.
[[nodiscard]] int nvidia_container_cli(const std::vector<std::string>& args);

}  // namespace gcr
