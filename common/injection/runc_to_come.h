// What runc will do with the spec once the shim hands it over, as far as work done in the rootfs
// at create must know it: the mounts it makes and the device nodes it creates (in its order),
// and whether the container gets a user namespace.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/result.h"
#include "hooks/libraries_at_create.h"
#include "json/strict_json.h"

namespace gcr {

// Mounts and device nodes the work at create looks at: where each lands is checked against every
// earlier one. A spec with more leaves that work to the hooks, run in the container.
inline constexpr std::size_t kMaxMountsToCome = 4096;

// The spec's mounts, then its linux.devices as mounts of nothing (runc creates the nodes after
// the mounts). A bind's relative source is taken from `bundle` (as runc was given it, "" the
// working directory). A malformed entry, or more than kMaxMountsToCome in all, is an error.
[[nodiscard]] Result<std::vector<MountToCome>> mounts_to_come(const Json& spec,
                                                              const std::string& bundle);

// Whether the shim, writing in the rootfs at create, writes what a createContainer hook would:
// it runs as root, and the container has no user namespace (there the hook writes as the
// container's root). An error says why not.
[[nodiscard]] Status check_writes_as_hook_would(const Json& spec);

}  // namespace gcr
