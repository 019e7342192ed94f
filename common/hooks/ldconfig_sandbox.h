// Running the host's ldconfig on a container rootfs without letting the image reach the
// host: the binary is opened on the host first and copied into a sealed memfd; a child then
// enters private mount/IPC/UTS/network namespaces, pivots into the rootfs (so every path
// ldconfig touches, symlinks included, is the container's), limits its resources, and
// executes the sealed copy with an empty environment, with /proc and /sys covered, only the
// file-access capabilities, no new privileges, resource limits, and death with its parent.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace gcr {

struct LdconfigJob {
  std::string ldconfig;              // host path of a statically linked ldconfig
  std::string rootfs;                // host path of the container rootfs
  std::vector<std::string> folders;  // in-container library directories to index
  int timeout_seconds = 20;
};

[[nodiscard]] Status run_ldconfig_in_rootfs(const LdconfigJob& job);

// What run_ldconfig_in_rootfs() checks of the binary before it runs it (it checks its sealed
// copy again): the same error, for callers that may not need to run it.
[[nodiscard]] Status check_ldconfig(const std::string& ldconfig);

// True when the ELF file has no program interpreter (it would otherwise be loaded from the
// container's root, i.e. run code from the image).
[[nodiscard]] Result<bool> is_static_elf(int fd);

}  // namespace gcr
