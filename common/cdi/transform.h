// `cdi transform root` (NVIDIA's `nvidia-ctk cdi transform root`): a spec written for one root
// moved to another, e.g. a spec generated inside a driver container, whose host files are under
// /run/nvidia/driver, for a host that sees them at /.
#pragma once

#include <string>

#include "base/result.h"
#include "cdi/spec.h"

namespace gcr {

// Which paths move: the host's (device nodes' host paths, mounts' host paths, the paths of
// hooks run on the host and their arguments) or the container's (device nodes' paths, mounts'
// destinations, the arguments of hooks run in the container, a startContainer hook's path).
enum class RootSide { kHost, kContainer };

struct RootTransform {
  std::string from;  // absolute and clean: no trailing slash but "/" itself, no `.` or `..`
  std::string to;    // absolute and clean
  RootSide side = RootSide::kHost;
};

// The transform NVIDIA's flags ask for: --from (required, absolute), --to (absolute; "" is
// "/"), --relative-to (host or container); both roots cleaned (`/a//b/../c/` is `/a/c`).
[[nodiscard]] Result<RootTransform> root_transform(const std::string& from, const std::string& to,
                                                   const std::string& relative_to);

// `path` under `from` (itself, or below it by whole components) moved under `to`; any other
// path as it is. "/" is under "/".
[[nodiscard]] std::string transformed_path(const std::string& path, const RootTransform& t);

// Every path of the chosen side in the spec's and each device's edits. A hook argument of the
// form <target>::<link> (create-symlinks) moves on both sides of the "::". A device node
// without a host path gets one where its path moves on the host side. The declared version is
// raised where the result needs a newer one.
void transform_cdi_root(CdiSpec& spec, const RootTransform& t);

}  // namespace gcr
