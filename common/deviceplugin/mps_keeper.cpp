#include "deviceplugin/mps_keeper.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>

namespace gcr {
namespace {

// As often as the daemon's loop ticks: a daemon that died is seen within it.
constexpr auto kTick = std::chrono::milliseconds(500);

// Whether two sets of groups name the same GPUs (what a daemon serves is their UUIDs).
bool same_gpus(const std::map<MpsGroup, std::vector<Gpu>>& a,
               const std::map<MpsGroup, std::vector<Gpu>>& b) {
  const auto same_uuids = [](const auto& x, const auto& y) {
    return x.first == y.first &&
           std::equal(x.second.begin(), x.second.end(), y.second.begin(), y.second.end(),
                      [](const Gpu& g, const Gpu& h) { return g.uuid == h.uuid; });
  };
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_uuids);
}

}  // namespace

bool mps_daemons_carry_over(const Config& before, const Config& after) {
  return before.mps() && after.mps() && before.driver == after.driver &&
         before.device_plugin.mps_root == after.device_plugin.mps_root;
}

MpsKeeper::MpsKeeper(Config config, Logger& logger, int changed_fd)
    : config_(std::move(config)),
      logger_(logger),
      changed_fd_(changed_fd),
      thread_(&MpsKeeper::run, this) {}

MpsKeeper::~MpsKeeper() {
  stop();
}

void MpsKeeper::want(std::map<MpsGroup, std::vector<Gpu>> groups, std::optional<GpuMemory> memory) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (same_gpus(groups, wanted_) && memory == memory_) return;
  wanted_ = std::move(groups);
  memory_ = std::move(memory);
  woken_ = true;
  wake_.notify_one();
}

MpsStates MpsKeeper::states() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return states_;
}

void MpsKeeper::stop() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    wake_.notify_one();
  }
  if (thread_.joinable()) thread_.join();
}

void MpsKeeper::tick(const std::map<MpsGroup, std::vector<Gpu>>& groups,
                     const std::optional<GpuMemory>& memory) {
  static const std::vector<Gpu> kNone;
  for (const auto& [group, gpus] : groups) {
    auto& supervisor = supervisors_[group];
    if (!supervisor) supervisor = std::make_unique<MpsSupervisor>(config_, group, logger_);
  }
  for (auto& [group, supervisor] : supervisors_) {
    const auto given = groups.find(group);
    // A group no longer given: its daemon stopped.
    supervisor->tick(given == groups.end() ? kNone : given->second, memory ? &*memory : nullptr);
    publish(group,
            MpsGroupState{supervisor->problem(), supervisor->serving(), supervisor->shares_mib()});
  }
}

void MpsKeeper::publish(const MpsGroup& group, MpsGroupState state) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto [at, added] = states_.try_emplace(group, state);
  if (!added && at->second == state) return;
  at->second = std::move(state);
  const std::uint64_t one = 1;
  (void)!::write(changed_fd_, &one, sizeof one);
}

void MpsKeeper::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const auto groups = wanted_;
    const auto memory = memory_;
    lock.unlock();
    tick(groups, memory);
    lock.lock();
    wake_.wait_for(lock, kTick, [this] { return stopping_ || woken_; });
    woken_ = false;
  }
  lock.unlock();
  for (auto& [group, supervisor] : supervisors_) supervisor->stop();
}

}  // namespace gcr
