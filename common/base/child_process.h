// Running a helper program that returns (the shim is static, so this is posix_spawn, not
// Boost.Process): explicit argv and environment, stdout and stderr captured with a size cap,
// killed after a timeout.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gcr {

struct ChildOutput {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// The directories searched for programs after $PATH (and the PATH of the programs we start),
// as runc's callers expect.
inline constexpr const char* kStandardSearchPath =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

// The environment of every program we start (helpers and injected hooks): a fixed PATH and
// nothing else, never the caller's or a container's.
[[nodiscard]] const std::vector<std::string>& minimal_environment();

// The environment a hook we inject runs with, whoever wrote it: `env` without the variables
// the dynamic loader and libc act on in a root process (LD_*, MALLOC_*, GCONV_PATH, ...: an
// image that set LD_PRELOAD must not reach a host-root hook), or minimal_environment() when
// nothing is left. Never empty, so no runtime lets the hook inherit another environment.
[[nodiscard]] std::vector<std::string> hook_environment(const std::vector<std::string>& env);

// `v` as exec's argv or envp: pointers into `v`'s strings, then a null. Built before a fork, so
// the child allocates nothing.
[[nodiscard]] std::vector<char*> c_strings(const std::vector<std::string>& v);

[[nodiscard]] Result<ChildOutput> run_child(const std::vector<std::string>& argv,
                                            const std::vector<std::string>& env,
                                            int timeout_seconds, std::size_t max_output_bytes);
// run_child with `input` (at most PIPE_BUF bytes) on the child's standard input.
[[nodiscard]] Result<ChildOutput> run_child_with_input(const std::vector<std::string>& argv,
                                                       const std::vector<std::string>& env,
                                                       std::string_view input, int timeout_seconds,
                                                       std::size_t max_output_bytes);

}  // namespace gcr
