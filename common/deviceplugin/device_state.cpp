#include "deviceplugin/device_state.h"

namespace gcr {

void DeviceState::publish(std::vector<PluginDevice> devices,
                          std::shared_ptr<const Topology> topology) {
  {
    const std::lock_guard lock(mutex_);
    devices_ = std::move(devices);
    topology_ = std::move(topology);
    ++generation_;
  }
  changed_.notify_all();
}

void DeviceState::set_topology(std::shared_ptr<const Topology> topology) {
  const std::lock_guard lock(mutex_);
  topology_ = std::move(topology);
}

DeviceState::Snapshot DeviceState::snapshot() const {
  const std::lock_guard lock(mutex_);
  return Snapshot{devices_, topology_, generation_};
}

void DeviceState::wait_for_change(std::uint64_t seen, const std::atomic<bool>& stopping,
                                  std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return generation_ != seen || stopping.load(); });
}

void DeviceState::wake() const {
  const std::lock_guard lock(mutex_);
  changed_.notify_all();
}

}  // namespace gcr
