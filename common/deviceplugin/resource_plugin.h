// One advertised resource of gpu-device-plugin: its device list, our gRPC server on its socket
// in the kubelet's directory, and its registration with the kubelet (with backoff when the
// kubelet refuses or is not there). The daemon (daemon.cpp) keeps one per resource and tells it
// what it saw: the kubelet restarting, our socket removed, a registration ended, a retry due.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "config/config.h"
#include "deviceplugin/device_state.h"
#include "deviceplugin/server.h"
#include "log/log.h"

namespace gcr {

inline constexpr const char* kKubeletSocket = "kubelet.sock";

// A socket's identity: which socket a path names now, if it names one.
using SocketId = std::pair<dev_t, ino_t>;
[[nodiscard]] std::optional<SocketId> socket_at(const std::string& path);
// Whether anything is at kubelet.sock's name in the kubelet's directory `dir`: a kubelet to
// register with.
[[nodiscard]] bool kubelet_socket_exists(const std::string& dir);

class ResourcePlugin {
 public:
  using Clock = std::chrono::steady_clock;

  // `registered_fd`: the eventfd each registration writes when it ends.
  ResourcePlugin(std::string resource, const Config& config, Logger& logger, int registered_fd);

  [[nodiscard]] const std::string& socket() const { return socket_; }
  DeviceState& state() { return state_; }
  // When the next retry (of serving or of registering) is due.
  [[nodiscard]] std::optional<Clock::time_point> next_due() const { return next_due_; }

  void stop();
  // The retry next_due() named: serving again, or registering again.
  void on_due();
  // Serves the socket (again) and registers. A registration still out is cancelled first: the
  // kubelet would dial back the server stopped here.
  void restart();
  // Whether our socket's path still names the socket we serve: a removal we made ourselves
  // (the stale socket a killed plugin left, unlinked before binding) leaves it there, and is
  // no reason to serve again.
  [[nodiscard]] bool serving_own_socket() const;
  // Whether `kubelet` is the kubelet.sock of our last registration, or of the one still out,
  // and we still serve: then its creation event is no restart (the kubelet started as we did,
  // and the event was queued before we registered; or the same socket was moved back).
  [[nodiscard]] bool registered_through(const std::optional<SocketId>& kubelet) const;
  // Our socket is gone (the kubelet removes every socket when it restarts): serve it again, at
  // once unless it was served less than `serve_backoff_` ago; removals that keep following a
  // serve wait twice as long each time, up to 30 s, so nothing can drive a loop.
  void socket_removed();
  // Registers with the kubelet there now, in the background (a registration still out is
  // cancelled): registration_ended says how it went.
  void try_register();
  // After registered_fd was written: the registration's outcome, if it has ended.
  void registration_ended();
  // kubelet.sock was removed: whatever comes next at its name is a kubelet to register with,
  // and a registration still out with the one removed is no use.
  void kubelet_gone();
  // A new kubelet.sock: register with it (serving again first where our socket went with the
  // old kubelet).
  void kubelet_restarted();

 private:
  std::string resource_;
  std::string socket_;
  std::string dir_;
  Logger& logger_;
  DeviceState state_;
  PluginServer server_;
  bool waiting_logged_ = false;
  bool pending_serve_ = false;
  std::optional<Clock::time_point> next_due_;
  std::optional<Clock::time_point> last_serve_;
  std::optional<SocketId> served_;
  std::optional<SocketId> registered_kubelet_;
  std::optional<SocketId> registering_kubelet_;  // the kubelet.sock registration_ is out to
  int registered_fd_;
  // Declared after the server and the state the kubelet's dial-back reaches: cancelled and
  // joined before they go.
  std::unique_ptr<Registration> registration_;
  std::chrono::seconds backoff_;
  std::chrono::seconds serve_backoff_;
};

}  // namespace gcr
