#include "deviceplugin/device_state.h"

namespace gcr {

void DeviceState::publish(std::vector<PluginDevice> devices) {
  {
    const std::lock_guard lock(mutex_);
    devices_ = std::move(devices);
    ++generation_;
  }
  changed_.notify_all();
}

DeviceState::Snapshot DeviceState::snapshot() const {
  const std::lock_guard lock(mutex_);
  return Snapshot{devices_, generation_};
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
