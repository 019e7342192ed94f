// NVIDIA 1.18's disable-device-node-modification: in a GPU container the driver's user-space
// libraries must not create or change device nodes, which they do when
// /proc/driver/nvidia/params says ModifyDeviceFiles: 1. runc mounts nothing inside /proc but a
// few files, so a createContainer hook, run in the container's mount namespace once runc has
// mounted its /proc, mounts a copy saying ModifyDeviceFiles: 0 over the file, read-only.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "hooks/rootfs.h"

namespace gcr {

inline constexpr const char* kDriverParamsPath = "/proc/driver/nvidia/params";

// `params` with its "ModifyDeviceFiles: 1" line saying 0; nothing when no line says 1 (it is 0
// already, or the driver has no such parameter).
[[nodiscard]] std::optional<std::string> without_device_node_modification(std::string_view params);

// Covers the root's /proc/driver/nvidia/params (the container's view of the driver's
// parameters: resolved in the root without following any symlink, a regular file), when it lets
// the driver's libraries modify device nodes, with a copy that does not: read-only, nosuid,
// nodev, noexec, made in the root's /dev (the container's own tmpfs under runc) and unlinked
// once mounted. False when there is nothing to cover: no such file (no NVIDIA kernel module, or
// no /proc), or modification off (as after a first run). Needs Linux 5.12 (open_tree,
// move_mount, mount_setattr).
[[nodiscard]] Result<bool> disable_device_node_modification(const RootFs& root);

}  // namespace gcr
