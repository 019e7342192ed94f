// Where the image's library links lead. ldconfig follows every link it looks at in a directory
// it scans (lib*.so*, ld-*.so* and the hwcap names) to the file it reads, wherever that is:
// Debian's alternatives (libblas.so.3 -> /etc/alternatives/... -> blas/libblas.so.3), software
// installed in /opt and linked into /usr/lib. A mount on any path of such a chain changes what
// ldconfig reads, though it lies outside every directory ldconfig scans.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "hooks/rootfs.h"
#include "ldcache/image_budget.h"

namespace gcr {

// Every path the library links in `resolved_directories` (RootFs::canonical names) lead
// through, the last one the file or where the chain breaks, each with its directory resolved
// in the root and its last part kept: the form mount destinations take. Reads links only, each
// listing and link charged to `budget`; directories resolved through `known`.
[[nodiscard]] Result<std::vector<std::string>> library_link_paths(
    const RootFs& root, const std::vector<std::string>& resolved_directories, ImageBudget& budget,
    ResolvedDirs& known);

}  // namespace gcr
