// IMEX channels (multi-node NVLink): where the driver puts their character devices, and the
// CDI names `gpu-ctk cdi generate --mode imex` writes for them (reference/driver-files.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gcr {

// The channels' folder under /dev; also the name /proc/devices lists their major under.
inline constexpr const char* kImexChannelModule = "nvidia-caps-imex-channels";
inline constexpr const char* kImexChannelDir = "/dev/nvidia-caps-imex-channels";

// The CDI class of NVIDIA's IMEX spec: nvidia.com/imex-channel=<channel>.
inline constexpr const char* kImexChannelClass = "imex-channel";

// "channel<N>", the device node's name in kImexChannelDir.
[[nodiscard]] std::string imex_channel_node_name(unsigned channel);

// The channel a node's name in kImexChannelDir says: "channel<N>" with N in canonical decimal
// (not "channel01"); nullopt for any other name.
[[nodiscard]] std::optional<unsigned> imex_channel_of_node_name(std::string_view name);

// <vendor>/imex-channel=<channel>.
[[nodiscard]] std::string imex_channel_cdi_name(std::string_view vendor, unsigned channel);

}  // namespace gcr
