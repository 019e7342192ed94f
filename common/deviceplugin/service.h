// The DevicePlugin gRPC service the kubelet calls on our socket.
#pragma once

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "config/config.h"
#include "deviceplugin/api.grpc.pb.h"
#include "deviceplugin/device_state.h"
#include "log/log.h"

namespace gcr {

class PluginService final : public v1beta1::DevicePlugin::Service {
 public:
  PluginService(const DeviceState& state, const Config& config, const Logger& logger)
      : state_(state), config_(config), logger_(logger) {}

  // Ends every ListAndWatch stream (the server is going away).
  void stop();

  grpc::Status GetDevicePluginOptions(grpc::ServerContext* context, const v1beta1::Empty* request,
                                      v1beta1::DevicePluginOptions* response) override;
  grpc::Status ListAndWatch(grpc::ServerContext* context, const v1beta1::Empty* request,
                            grpc::ServerWriter<v1beta1::ListAndWatchResponse>* writer) override;
  grpc::Status GetPreferredAllocation(grpc::ServerContext* context,
                                      const v1beta1::PreferredAllocationRequest* request,
                                      v1beta1::PreferredAllocationResponse* response) override;
  grpc::Status Allocate(grpc::ServerContext* context, const v1beta1::AllocateRequest* request,
                        v1beta1::AllocateResponse* response) override;
  grpc::Status PreStartContainer(grpc::ServerContext* context,
                                 const v1beta1::PreStartContainerRequest* request,
                                 v1beta1::PreStartContainerResponse* response) override;

 private:
  // sharing = mps: the available IDs of the last GetPreferredAllocation, taken by the next
  // Allocate within 5 s (the kubelet asks for a container's preferred set, then allocates it),
  // for a refusal to say what each GPU had free.
  void remember_free(std::vector<std::string> available);
  std::vector<std::string> take_free_when_asked();

  const DeviceState& state_;
  const Config& config_;
  const Logger& logger_;
  std::atomic<bool> stopping_{false};
  std::mutex asked_mutex_;
  std::vector<std::string> free_when_asked_;
  std::chrono::steady_clock::time_point asked_at_{};
};

// The options we send in RegisterRequest and from GetDevicePluginOptions: the same in both.
[[nodiscard]] v1beta1::DevicePluginOptions plugin_options();

// The ListAndWatch message for a device list.
[[nodiscard]] v1beta1::ListAndWatchResponse device_list_message(
    const std::vector<PluginDevice>& devices);

}  // namespace gcr
