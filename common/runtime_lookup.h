// Finding the low-level runtime (runc, crun) the shim hands every call to.
#pragma once

#include <string>
#include <vector>

#include "result.h"

namespace gcr {

// The default directories searched after $PATH, as runc's callers expect.
inline constexpr const char* kDefaultSearchPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// Returns the absolute path of the first candidate that resolves to an executable regular
// file and is not the running program (`self`, compared by device and inode through any
// symlink). A candidate containing '/' is a path; a bare name is searched in `path_env`
// then kDefaultSearchPath. The error names every candidate and why it was skipped.
[[nodiscard]] Result<std::string> find_low_level_runtime(
    const std::vector<std::string>& candidates, const std::string& path_env,
    const std::string& self = "/proc/self/exe");

}  // namespace gcr
