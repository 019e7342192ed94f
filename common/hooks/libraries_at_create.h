// The update-libraries hook's work done by the shim at `create`, before runc mounts anything:
// the links, the drop-in and the loader cache written into the rootfs as the hook would write
// them once runc has made the spec's mounts. That is known now only when no mount changes
// what ldconfig reads, but for the library files mounted into the folders, which are read on
// the host. Otherwise it is an error saying why, and the caller keeps the hook.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "hooks/ldcache_in_process.h"
#include "hooks/libraries_request.h"
#include "hooks/rootfs.h"

namespace gcr {

// A mount runc will make, as the spec gives it.
struct MountToCome {
  std::string destination;
  std::string source;
  bool bind = false;
  bool fresh = false;  // a new, empty filesystem (tmpfs, proc, sysfs, ...): nothing to follow
};

// The mounts runc will make, in its order, and where each lands in the root (its in-root path,
// symlinks followed).
struct LandedMounts {
  std::vector<MountToCome> mounts;
  std::vector<std::string> destinations;
};

// Where each of `mounts` lands, as runc resolves it once the mounts before it are made: in the
// image; below a filesystem mounted fresh before it (tmpfs, proc, sysfs: nothing there to
// follow) by name. Below any other earlier mount it depends on what that one holds, unknown
// now: an error.
[[nodiscard]] Result<LandedMounts> land_mounts(const RootFs& root, std::vector<MountToCome> mounts,
                                               ResolvedDirs& known);

// Whether a mount at `destination` changes what `plan` read: it covers a file or directory
// the plan read, or adds an entry ldconfig would look at (a library or hwcap name in a
// scanned directory, a name an include matches). Every path resolved in the root.
[[nodiscard]] bool mount_changes_plan(const std::string& destination, const LdcachePlan& plan);

// Creates the links, then writes the drop-in, ld.so.conf and the cache. An error when the
// result could differ from the hook's (the links and folders may then be there: the hook
// makes them again, identically). `known` is what resolving paths in `root` learnt (landing
// `mounts` among them), kept true across writes.
[[nodiscard]] Status update_libraries_at_create(const RootFs& root, const LibrariesRequest& request,
                                                const LandedMounts& mounts, ResolvedDirs& known);

}  // namespace gcr
