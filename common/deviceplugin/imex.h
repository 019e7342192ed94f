// [device-plugin] imex-channel: the default IMEX channel (channel 0, what NVIDIA's plugin offers)
// for every container given GPUs, so that multi-node NVLink jobs (GB200 NVL72) import memory
// across nodes. The channel's node is made by the driver (NVreg_CreateImexChannel0) or the
// administrator; the plugin reads the node each time, so one made later is given from then on.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "driver/device_nodes.h"

namespace gcr {

constexpr unsigned kDefaultImexChannel = 0;

// The IMEX channels a container given GPUs also gets now: none when disabled, or when auto and
// the channel's node is not there; channel 0 when it is; when enabled and it is not, an error
// saying so and why.
[[nodiscard]] Result<std::vector<unsigned>> imex_channels_to_give(const Config& config,
                                                                  DeviceNodes& nodes);

// For the log: what imex-channel gives on this node now, in one line ("" when disabled).
[[nodiscard]] std::string imex_channel_state(const Config& config, DeviceNodes& nodes);

}  // namespace gcr
