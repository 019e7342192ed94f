// The advertised devices, shared by the daemon's loop (which refreshes them) and the gRPC
// threads (ListAndWatch streams wait for a change; Allocate reads them).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "deviceplugin/devices.h"
#include "topology/topology.h"

namespace gcr {

class DeviceState {
 public:
  struct Snapshot {
    std::vector<PluginDevice> devices;
    std::shared_ptr<const Topology> topology;
    std::uint64_t generation = 0;
  };

  // Replaces the list (and the topology it is chosen from) and wakes every watcher.
  void publish(std::vector<PluginDevice> devices, std::shared_ptr<const Topology> topology);
  // Replaces the topology only: the list the kubelet watches is unchanged.
  void set_topology(std::shared_ptr<const Topology> topology);
  [[nodiscard]] Snapshot snapshot() const;
  // Returns when the generation is no longer `seen`, `stopping` is set (and wake() called), or
  // after `timeout`.
  void wait_for_change(std::uint64_t seen, const std::atomic<bool>& stopping,
                       std::chrono::milliseconds timeout) const;
  void wake() const;

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<PluginDevice> devices_;
  std::shared_ptr<const Topology> topology_ = std::make_shared<Topology>();
  std::uint64_t generation_ = 0;
};

}  // namespace gcr
