// The hand-off to the low-level runtime: a plain execv, so runc keeps our pid, stdio, exit
// status and signals. Only fds 0-2 and those runc is told about survive the exec.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "oci/runc_args.h"

namespace gcr {

// How many fds above stdio runc is handed: LISTEN_FDS (socket activation, when LISTEN_PID
// names this process) plus --preserve-fds, as runc counts them.
[[nodiscard]] unsigned handed_fd_count(const RuncArgs& args, const char* listen_fds,
                                       const char* listen_pid);

// Marks every fd from 3 + handed_fds upward close-on-exec.
void close_unhanded_fds(unsigned handed_fds);

// execv(runtime, [runtime, args...]) with the current environment. Returns only on failure.
[[nodiscard]] Error exec_runtime(const std::string& runtime, const std::vector<std::string>& args);

}  // namespace gcr
