// Running a helper program that returns (the shim is static, so this is posix_spawn, not
// Boost.Process): explicit argv and environment, stdout and stderr captured with a size cap,
// killed after a timeout.
#pragma once

#include <string>
#include <vector>

#include "result.h"

namespace gcr {

struct ChildOutput {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

[[nodiscard]] Result<ChildOutput> run_child(const std::vector<std::string>& argv,
                                            const std::vector<std::string>& env,
                                            int timeout_seconds, std::size_t max_output_bytes);

}  // namespace gcr
