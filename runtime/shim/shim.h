// The gpu-container-runtime program: walk runc's argv, load the configuration, find the
// low-level runtime, edit the bundle on create/run, then exec the runtime.
#pragma once

#include <string>
#include <vector>

namespace gcr {

// `args` is argv[1..]. Returns an exit status only when the hand-off did not happen.
[[nodiscard]] int run_shim(const std::vector<std::string>& args);

}  // namespace gcr
