// nvidia-container-cli's command line (libnvidia-container's CLI): its global flags, the
// commands `configure`, `info` and `list` with theirs. Read by the shim (the hook containerd's
// `ctr run --gpus` adds) and by our nvidia-container-cli compatibility command.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace gcr {

inline constexpr const char* kNvidiaCliName = "nvidia-container-cli";

struct CliFlagValue {
  std::string name;   // the long name, whichever spelling was used
  std::string value;  // "" for a switch
};

struct CliCommandLine {
  std::vector<CliFlagValue> global;  // before the command
  std::string command;               // configure | info | list
  std::vector<CliFlagValue> flags;   // the command's
  std::vector<std::string> operands;
};

// Flags as nvidia-container-cli spells them (`--device=0`, `--device 0`, `-d 0`), each
// checked against the global table or the command's; an unknown flag or command is an error
// naming it.
[[nodiscard]] Result<CliCommandLine> parse_nvidia_cli(const std::vector<std::string>& args);

// Whether a hook's argv is containerd's --gpus hook:
//   containerd oci-hook -- <dir>/nvidia-container-cli [global flags] configure [flags] {{rootfs}}
[[nodiscard]] bool is_ctr_gpus_hook(const std::vector<std::string>& args);

// The arguments given to nvidia-container-cli in such a hook (after its name); empty unless
// is_ctr_gpus_hook(args).
[[nodiscard]] std::vector<std::string> nvidia_cli_args(const std::vector<std::string>& args);

}  // namespace gcr
