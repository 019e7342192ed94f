// The names that carry a container's GPU request from whoever writes it (the device plugin,
// a user, an engine) to the shim that reads it (reference/device-plugin.md §4).
#pragma once

namespace gcr {

inline constexpr const char* kVisibleDevicesVar = "NVIDIA_VISIBLE_DEVICES";
inline constexpr const char* kImexChannelsVar = "NVIDIA_IMEX_CHANNELS";
// The volume-mount markers' folder: <dir>/<id> names a GPU, <dir>/imex/<channel> a channel.
inline constexpr const char* kVolumeMarkerDir = "/var/run/nvidia-container-devices";
inline constexpr const char* kImexMarkerFolder = "imex";

}  // namespace gcr
