// The gpu-container-runtime program: walk runc's argv, load the configuration, find the
// low-level runtime, edit the bundle on create/run, then exec the runtime.
#pragma once

#include <string>
#include <vector>

namespace gcr {

// `program` is argv[0] (NVIDIA's nvidia-container-runtime.cdi and .legacy choose the request
// mode), `args` argv[1..]. Returns an exit status only when the hand-off did not happen.
[[nodiscard]] int run_shim(const std::string& program, const std::vector<std::string>& args);

}  // namespace gcr
