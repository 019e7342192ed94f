// The search path of musl's loader, which reads no /etc/ld.so.cache.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "hooks/rootfs.h"
#include "ldcache/image_budget.h"

namespace gcr {

// musl's loader searches the directories /etc/ld-musl-<arch>.path lists (split on colons and
// newlines), or /lib, /usr/local/lib and /usr/lib where there is no such file. In an image whose
// loader is musl's (/lib/ld-musl-<arch>.so.1, or /etc/alpine-release: Alpine, where gcompat runs
// glibc programs such as nvidia-smi), the library `folders` go into that file before the
// directories already there, one per line; a folder listed already keeps its place. musl takes
// the first file of a name and does not search on when its ELF class is another, so a folder
// of 32-bit libraries goes only into the 32-bit loader's file, and only where the image has that
// loader. Nothing for any other image, and nothing written when the files already say so.
// The image is read within budgets of its own (ldcache/image_budget.h).
[[nodiscard]] Status add_folders_to_musl_path(const RootFs& root,
                                              const std::vector<std::string>& folders);

// Whether the image's /lib holds musl's loader, as the listing `known` holds shows it (the
// plan at create has listed /lib): the shim leaves such an image's libraries to the hook, which
// writes musl's search path. Nothing that cannot be read counts.
[[nodiscard]] bool lists_musl_loader(const RootFs& root, ResolvedDirs& known, ImageBudget& budget);

}  // namespace gcr
