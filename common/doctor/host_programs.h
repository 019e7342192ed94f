// The programs gpu-ctk doctor runs as root (containerd, busybox): looked up as the shim looks up
// runc, in $PATH then the standard directories, only where nobody but root can replace them.
#pragma once

#include <string>

#include "base/result.h"

namespace gcr {

[[nodiscard]] Result<std::string> program_in_path(const std::string& name);

// What `program --version` prints (minimal environment, 10 s, 64 KiB at most); an error when it
// does not run or exits non-zero.
[[nodiscard]] Result<std::string> program_version(const std::string& program);

}  // namespace gcr
