// The programs gpu-ctk doctor runs as root (containerd, busybox): looked up as the shim looks up
// runc, in $PATH then the standard directories, only where nobody but root can replace them.
#pragma once

#include <string>

#include "base/result.h"

namespace gcr {

[[nodiscard]] Result<std::string> program_in_path(const std::string& name);

}  // namespace gcr
