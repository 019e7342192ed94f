// The advertised devices, shared by the daemon's loop (which refreshes them) and the gRPC
// threads (ListAndWatch streams wait for a change; Allocate reads them).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "deviceplugin/devices.h"

namespace gcr {

class DeviceState {
 public:
  struct Snapshot {
    std::vector<PluginDevice> devices;
    std::uint64_t generation = 0;
  };

  // Replaces the list and wakes every watcher.
  void publish(std::vector<PluginDevice> devices);
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
  std::uint64_t generation_ = 0;
};

}  // namespace gcr
