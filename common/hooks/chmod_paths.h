// NVIDIA's deprecated `chmod` hook (`nvidia-cdi-hook chmod --mode 755 --path /dev/dri`, a
// workaround for crun making /dev/dri 0700 in rootless containers), which NVIDIA's CDI specs
// may still carry: the mode of each path as the container sees it once runc has made its mounts.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/result.h"
#include "hooks/rootfs.h"

namespace gcr {

// NVIDIA's --mode: octal digits, at most 07777.
[[nodiscard]] Result<mode_t> parse_chmod_mode(const std::string& text);

// Sets `mode` on each of `paths` in the container, the container's mounts crossed. No symlink
// is followed (an image could point one anywhere; NVIDIA's hook followed it on the host): a
// path through one is an error. A path that does not exist is skipped, as NVIDIA's hook skips
// it.
[[nodiscard]] Status chmod_in_root(const RootFs& root, const std::vector<std::string>& paths,
                                   mode_t mode);

}  // namespace gcr
