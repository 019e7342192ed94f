// gpu-device-plugin: serve our socket in the kubelet's directory, register, keep the device
// list fresh, register again when the kubelet restarts, stop cleanly on SIGTERM. One thread
// waits on signals, the directory (inotify), a tick, the Xid watch and two eventfds; gRPC's
// threads serve the kubelet, each registration runs on a thread of its own and the MPS daemons
// are kept by another (a kubelet or a daemon that never answers holds up no health report).
#pragma once

#include <string>
#include <vector>

namespace gcr {

// `args` is argv[1..]: [--config FILE] [--help] [--version]. Returns the exit status.
[[nodiscard]] int run_device_plugin(const std::vector<std::string>& args);

}  // namespace gcr
