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

// Where a resolution stands: the in-root path so far ("" is the root) and the symlinks it may
// still follow.
struct RootResolution {
  std::string resolved;
  int links_left = 40;  // as Linux allows one path
};

// resolve_in_root's work on `path` continued from `from`, so that a caller can keep where a
// resolution stands after each part of a path and go on from there.
[[nodiscard]] Result<RootResolution> resolve_in_root_from(const std::string& root,
                                                          RootResolution from,
                                                          std::string_view path);

}  // namespace gcr
