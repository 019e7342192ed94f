// What the host says about a device node: the seam between edit logic and the filesystem.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "base/result.h"

namespace gcr {

struct NodeStat {
  char type = '\0';  // 'c' char, 'b' block, 'p' FIFO; '\0' anything else (incl. symlinks)
  unsigned major = 0;
  unsigned minor = 0;
  mode_t permissions = 0;  // st_mode & 07777
  uid_t uid = 0;
  gid_t gid = 0;
};

// lstat(2) of a host path: symlinks are not followed.
using NodeStatFn = std::function<Result<NodeStat>(const std::string& host_path)>;

[[nodiscard]] Result<NodeStat> lstat_node(const std::string& host_path);
// stat(2): what a path's symlinks lead to (a /dev/char link's node).
[[nodiscard]] Result<NodeStat> stat_node(const std::string& host_path);

}  // namespace gcr
