// Path resolution inside a host directory tree that stands for "/" (the driver root, the dev
// root): symlinks are followed as if the tree were chroot'ed, so nothing outside it is named.
// This works on strings and is meant for trusted, root-owned trees; container rootfs work
// goes through the fd-based resolver in rootfs.h instead.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace gcr {

// The in-root absolute path `path` leads to ("/usr/lib/libcuda.so.1" ->
// "/usr/lib/libcuda.so.550.54.15"), following at most 40 symlinks. Errors when a component is
// missing or the budget runs out.
[[nodiscard]] Result<std::string> resolve_in_root(const std::string& root, std::string_view path);

}  // namespace gcr
