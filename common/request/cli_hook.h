// What containerd's `ctr run --gpus` hook asks for: the nvidia-container-cli flags it carries
// (reference: libnvidia-container's `configure`), read as a GPU request.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "oci/spec_view.h"
#include "vocabulary/capabilities.h"

namespace gcr {

struct CliHookRequest {
  std::vector<std::string> devices;        // --device: IDs, `all`, or nothing
  CapabilitySet capabilities;              // --compute, --utility, ... (--compat32 as one)
  std::vector<std::string> requirements;   // --require, in order
  std::vector<std::string> mig_config;     // --mig-config
  std::vector<std::string> mig_monitor;    // --mig-monitor
  std::vector<std::string> imex_channels;  // --imex-channel
};

// The request of the first prestart or createRuntime hook that is containerd's --gpus hook
// (ctr 1.x puts it in prestart, 2.1 in createRuntime); nullopt when there is none. A flag
// nvidia-container-cli does not have, or a `configure` missing, is an error naming it. Flags
// about how libnvidia-container works (--load-kmods, --ldcache, --no-cgroups, --pid, ...) do not
// change the request.
[[nodiscard]] Result<std::optional<CliHookRequest>> read_cli_hook(const SpecView& spec);

}  // namespace gcr
