// Finding the low-level runtime (runc, crun) the shim hands every call to.
#pragma once

#include <string>
#include <vector>

#include "base/child_process.h"
#include "base/result.h"

namespace gcr {

// Returns the absolute path of the first candidate that resolves to an executable regular
// file and is not the running program (`self`, compared by device and inode through any
// symlink). A candidate containing '/' is a path; a bare name is searched in `path_env`
// then kStandardSearchPath. The error names every candidate and why it was skipped.
[[nodiscard]] Result<std::string> find_low_level_runtime(
    const std::vector<std::string>& candidates, const std::string& path_env,
    const std::string& self = "/proc/self/exe");

// The program `name` as find_low_level_runtime looks up a bare name (PATH's absolute entries,
// then kStandardSearchPath; only a file nobody but root can replace): for tools that run
// engine programs as root (gpu-ctk doctor). The error says why none was usable.
[[nodiscard]] Result<std::string> find_program(const std::string& name,
                                               const std::string& path_env);

}  // namespace gcr
