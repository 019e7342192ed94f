// gpu-device-plugin: serve our socket in the kubelet's directory, register, keep the device
// list fresh, register again when the kubelet restarts, stop cleanly on SIGTERM. One thread
// waits on signals, the directory (inotify) and a tick; gRPC's threads serve the kubelet, and
// each registration runs on a thread of its own (a kubelet that never answers holds no one up).
#pragma once

#include <string>
#include <vector>

namespace gcr {

// `args` is argv[1..]: [--config FILE] [--help] [--version]. Returns the exit status.
[[nodiscard]] int run_device_plugin(const std::vector<std::string>& args);

}  // namespace gcr
