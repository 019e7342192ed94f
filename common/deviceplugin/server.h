// Our gRPC server on a unix socket in the kubelet's directory. The kubelet deletes every
// socket there when it restarts, so the daemon stops this and starts a new one.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <grpcpp/client_context.h>
#include <grpcpp/server.h>

#include "base/result.h"
#include "deviceplugin/service.h"

namespace gcr {

class PluginServer {
 public:
  PluginServer(const DeviceState& state, const Config& config, const Logger& logger)
      : state_(state), config_(config), logger_(logger) {}
  ~PluginServer() { stop(); }

  // Serves `socket_path` (a stale file there is removed first).
  [[nodiscard]] Status start(const std::string& socket_path);
  // Ends the streams, shuts down (2 s at most) and removes the socket file.
  void stop();
  [[nodiscard]] bool running() const { return server_ != nullptr; }

 private:
  const DeviceState& state_;
  const Config& config_;
  const Logger& logger_;
  std::unique_ptr<PluginService> service_;  // a new one per server: gRPC registers it once
  std::unique_ptr<grpc::Server> server_;
  std::string socket_path_;
};

// Register(version v1beta1, our socket's file name, the resource, our options) on the
// kubelet's socket, on a thread of its own: the kubelet dials us back before it answers, and a
// kubelet that never answers holds the call up to its 15 s deadline, which the daemon's loop
// (health, MPS, labels) does not wait for. `done_fd` (an eventfd) is written when it ends.
class Registration {
 public:
  Registration(const std::string& kubelet_socket, const std::string& endpoint,
               const std::string& resource_name, int done_fd);
  // Cancels the call if it is still out, and waits for its thread.
  ~Registration();
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;

  // How the call ended; nothing while it is still out.
  [[nodiscard]] std::optional<Status> result() const;

 private:
  void call(const std::string& kubelet_socket, const v1beta1::RegisterRequest& request,
            int done_fd);

  grpc::ClientContext context_;
  mutable std::mutex mutex_;
  std::optional<Status> result_;
  std::thread thread_;
};

}  // namespace gcr
