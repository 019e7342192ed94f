// A kubelet's device-manager side, for tests: it serves Registration on <dir>/kubelet.sock,
// and on Register does what the kubelet does: checks the request, dials the plugin back, asks
// for its options and opens the ListAndWatch stream, whose lists it keeps. Tests then make
// the admission calls (GetPreferredAllocation, Allocate) and restart it as a kubelet restarts:
// every socket in the directory removed, a new kubelet.sock served.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "deviceplugin/api.grpc.pb.h"

namespace gcr::test {

using Devices = std::vector<v1beta1::Device>;

// The IDs of a device list, in order; the health of one ID ("" when it is not listed).
[[nodiscard]] std::vector<std::string> ids_of(const Devices& devices);
[[nodiscard]] std::string health_of(const Devices& devices, const std::string& id);

// What the kubelet and containerd's CRI would make of an Allocate answer, as `ctr run`
// arguments: envs, bind mounts, annotations, and the CDI devices as CDI annotations (as the
// 1.28 kubelet also did; Debian 12's containerd 1.6 has no CDI of its own).
[[nodiscard]] std::vector<std::string> ctr_arguments(
    const v1beta1::ContainerAllocateResponse& answer);

class FakeKubelet {
 public:
  explicit FakeKubelet(std::string dir);
  ~FakeKubelet();
  FakeKubelet(const FakeKubelet&) = delete;
  FakeKubelet& operator=(const FakeKubelet&) = delete;

  [[nodiscard]] const std::string& dir() const { return dir_; }

  // A kubelet restart: stop serving, remove every socket in the directory, serve again.
  void restart();
  void stop();
  void start();

  [[nodiscard]] std::vector<v1beta1::RegisterRequest> registrations() const;
  [[nodiscard]] bool wait_for_registrations(std::size_t count, std::chrono::milliseconds timeout);
  [[nodiscard]] v1beta1::DevicePluginOptions options(const std::string& resource = kGpu) const;

  // The newest list from a resource's ListAndWatch stream.
  [[nodiscard]] Devices devices(const std::string& resource = kGpu) const;
  [[nodiscard]] bool wait_for_devices(const std::function<bool(const Devices&)>& wanted,
                                      std::chrono::milliseconds timeout,
                                      const std::string& resource = kGpu);

  // Admission calls on the plugin registered for `resource`.
  grpc::Status allocate(const std::vector<std::string>& ids, v1beta1::AllocateResponse& response,
                        const std::string& resource = kGpu);
  grpc::Status preferred(const std::vector<std::string>& available,
                         const std::vector<std::string>& must_include, int size,
                         v1beta1::PreferredAllocationResponse& response,
                         const std::string& resource = kGpu);

  static inline const std::string kGpu = "nvidia.com/gpu";

 private:
  class Registration;
  // One registered resource: the plugin's endpoint and its ListAndWatch stream.
  struct Endpoint {
    std::shared_ptr<v1beta1::DevicePlugin::Stub> stub;
    v1beta1::DevicePluginOptions options;
    std::unique_ptr<grpc::ClientContext> stream;
    std::thread watcher;
    Devices devices;
    std::size_t lists = 0;
  };
  grpc::Status on_register(const v1beta1::RegisterRequest& request);
  void watch(Endpoint* endpoint);
  void end_watch(const std::string& resource);
  void end_all();
  std::shared_ptr<v1beta1::DevicePlugin::Stub> stub_of(const std::string& resource) const;

  std::string dir_;
  std::unique_ptr<Registration> service_;
  std::unique_ptr<grpc::Server> server_;

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<v1beta1::RegisterRequest> registrations_;
  // By resource; shared with a Register still waiting for the endpoint's first list.
  std::map<std::string, std::shared_ptr<Endpoint>> endpoints_;
};

}  // namespace gcr::test
