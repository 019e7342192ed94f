// A CDI spec for the host's GPUs, from the same discovery the shim uses (gpu-ctk cdi generate).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "cdi/spec.h"
#include "config/config.h"
#include "driver/host.h"

namespace gcr {

// How the devices are named (NVIDIA's --device-name-strategy): `index` (0, and 0:1 for MIG
// device 1 of GPU 0), `uuid` (GPU-<uuid>, MIG-<uuid>), `type-index` (gpu0, mig0:1); each
// strategy given adds one device per GPU and per MIG device.
struct CdiNaming {
  std::vector<std::string> strategies = {"index", "uuid"};
  bool all_device = true;  // a device "all" with every GPU
};

// Whether `strategy` is one generate_cdi_spec knows.
[[nodiscard]] bool is_cdi_name_strategy(const std::string& strategy);

// Devices: one per GPU and per MIG device and naming strategy, plus "all", each with the device
// edits the shim gives a container asking for that GPU, MIG device or `all` (live_edits.h:
// device_edits): a GPU's node and DRM nodes; a MIG device's parent GPU node and the access
// capabilities of its GPU and compute instances. The spec's own edits hold what every GPU
// needs (control nodes, libraries, binaries, IPC and graphics configuration of every
// capability, firmware, the hooks). Device nodes carry only their paths: numbers are read from
// the host when the spec is applied, so the spec does not go stale when majors change. NVML
// is loaded to name the MIG devices only when the driver lists MIG instances; then a failing
// NVML is an error (the spec would lack them).
[[nodiscard]] Result<CdiSpec> generate_cdi_spec(DriverHost& host, const Config& config,
                                                const std::string& kind,
                                                const CdiNaming& naming = {});

// NVIDIA's management spec (kind management.nvidia.com/gpu), for containers that watch or
// manage the GPUs rather than compute on them (DCGM, the GPU Operator's validator): one device,
// `all`, with every NVIDIA character device node in the dev root (every /dev/nvidia*: GPUs and
// control nodes; /dev/nvidia-caps/nvidia-cap*) but GPUDirect Storage's, NVSwitches' and
// NVLinks'. The spec's own edits are a GPU spec's without the device-node modification guard
// and EGL's application profile. No NVML is loaded. An error when the dev root has no node.
[[nodiscard]] Result<CdiSpec> generate_management_spec(DriverHost& host, const Config& config,
                                                       const std::string& kind);

// NVIDIA's IMEX spec (kind nvidia.com/imex-channel, `gpu-ctk cdi generate --mode imex`): a
// device per IMEX channel in the dev root, named by its number (`0` for channel0), with that
// channel's node alone, and `all` with every one. A node whose name is no channel number, or
// whose numbers are not that channel's, is left out with a note. An error when no channel is
// there.
[[nodiscard]] Result<CdiSpec> generate_imex_spec(DriverHost& host, const std::string& kind);

}  // namespace gcr
