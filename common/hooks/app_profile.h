// NVIDIA 1.20's update-application-profile: the driver's EGL enumerates every GPU the host's
// /proc/driver/nvidia lists, including those a container was not given. An application profile
// in the image's /etc/nvidia/nvidia-application-profiles-rc.d, read by the driver's libraries
// at start, limits EGL to the container's own GPUs: EGLVisibleDGPUDevices, a mask with the bit
// of each GPU's device minor (0 to 63) set.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "hooks/rootfs.h"
#include "json/strict_json.h"

namespace gcr {

inline constexpr const char* kAppProfileDir = "/etc/nvidia/nvidia-application-profiles-rc.d";
inline constexpr const char* kAppProfileName = "10-container.conf";

// The mask of the GPUs the spec gives the container: the character devices in linux.devices
// at /dev/nvidia<N>, by their minor (the control nodes and MIG caps are not GPUs; a minor above
// 63 has no bit). Entries of another shape are passed by: runc judges the spec.
[[nodiscard]] std::uint64_t visible_gpu_mask(const Json& spec);

// The profile: EGLVisibleDGPUDevices set to `mask` for every application.
[[nodiscard]] std::string app_profile_text(std::uint64_t mask);

// Writes the profile for `mask` into the root (its directories made as needed; resolved inside
// the root), unless the file already says so. Nothing for a mask of no GPU.
[[nodiscard]] Status write_app_profile(const RootFs& root, std::uint64_t mask);

}  // namespace gcr
