// NVIDIA 1.20's update-application-profile done while the shim handles `create`: when the spec
// holds our update-application-profile hook (a graphics request's, or a CDI spec's) and the
// profile written into the rootfs now is what the container will see, the shim writes it and the
// hook goes (one process fewer per start).
#pragma once

#include "config/config.h"
#include "injection/libraries_at_create.h"
#include "json/strict_json.h"
#include "log/log.h"

namespace gcr {

// Writes the application profile for the spec's GPUs (hooks/app_profile.h) into the rootfs and
// removes our update-application-profile hook from `spec`. A spec without GPUs, or whose mounts
// land on the profile, above it or below it (a volume: nothing is written into one, and the
// hook could not write through it either), gets none, and the hook goes too. The hook stays
// (said at debug level) when the shim is not root, the container has a user namespace (the
// hook writes as the container's root), the rootfs cannot be opened, or where the mounts land
// cannot be told. A profile that cannot be written (a file where its folder goes) is a warning,
// and the hook goes: the container starts, its EGL seeing every GPU, as without a profile.
void write_app_profile_at_create(Json& spec, ContainerRootFs& root, const Config& config,
                                 const Logger& logger);

}  // namespace gcr
