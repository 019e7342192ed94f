// gpu-ctk system create-dev-char-symlinks --watch: the links kept as NVIDIA's nodes appear
// (where no udev rule runs the command: a driver container, a host without udev).
#pragma once

#include <functional>
#include <string>

#include "base/result.h"

namespace gcr {

// Blocks SIGTERM, SIGINT and SIGHUP (they end the watch, not the process), calls `sync` once,
// then again after each burst of events in `dev_dir`: a name starting with "nvidia" created or
// moved in, or any name in its nvidia-caps/ and nvidia-caps-imex-channels/ (watched from when
// they appear). Bounded: three inotify watches, one event buffer, at most one `sync` per
// 100 ms, however many events come. Returns when one of those signals arrives; an error when
// the watch cannot be set up or read.
[[nodiscard]] Status watch_dev_nodes(const std::string& dev_dir, const std::function<void()>& sync);

}  // namespace gcr
