// [device-plugin] imex-channel: the default IMEX channel (channel 0, what NVIDIA's plugin offers)
// for every container given GPUs, so that multi-node NVLink jobs (GB200 NVL72) import memory
// across nodes. The channel's node is made by the driver (NVreg_CreateImexChannel0) or the
// administrator; the plugin looks for it each time, so one made later is given from then on. It
// looks for the character device alone, as NVIDIA's plugin does (the DaemonSet sees the host's
// /dev, not /proc/devices); the runtime checks its major when it gives it.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"

namespace gcr {

constexpr unsigned kDefaultImexChannel = 0;

// The IMEX channels a container given GPUs also gets now: none when disabled, or when auto and
// the channel's node is not there; channel 0 when it is; when enabled and it is not, an error
// saying so and why.
[[nodiscard]] Result<std::vector<unsigned>> imex_channels_to_give(const Config& config);

// What imex-channel gives on this node now, for the log: its line, and whether it is a warning
// (enabled, and the node lacks the channel). An empty line when disabled.
struct ImexChannelState {
  std::string line;
  bool warning = false;
  bool operator==(const ImexChannelState&) const = default;
};
[[nodiscard]] ImexChannelState imex_channel_state(const Config& config);

// "0,1": the channels' numbers, as NVIDIA_IMEX_CHANNELS and the log write them.
[[nodiscard]] std::string imex_channel_list(const std::vector<unsigned>& channels);

}  // namespace gcr
