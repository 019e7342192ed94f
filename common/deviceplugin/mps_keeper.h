// sharing = "mps": every MpsSupervisor, ticked on a thread of their own. Asking a daemon that
// hangs takes up to 5 s, and stopping one 10 s more, while the daemon's loop must report a
// GPU's loss, a kubelet restart or an Xid within a second.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "deviceplugin/mps_supervisor.h"

namespace gcr {

// What a group's daemon says: why it does not serve ("" while it does), the GPUs it serves (by
// UUID), and its clients' memory on each where it is limited.
struct MpsGroupState {
  std::string problem;
  std::set<std::string> serving;
  std::map<std::string, std::uint64_t> share_mib;
  bool operator==(const MpsGroupState&) const = default;
};
using MpsStates = std::map<MpsGroup, MpsGroupState>;

// Whether the daemons a keeper runs under `before` serve as they are under `after`: MPS sharing
// in both, from one driver and one mps-root. A plugin started again for a changed configuration
// then takes the running keeper over, and the clients' work goes on: want() stops the daemons of
// groups no longer given and restarts those whose GPUs changed.
[[nodiscard]] bool mps_daemons_carry_over(const Config& before, const Config& after);

class MpsKeeper {
 public:
  // `changed_fd` (an eventfd, which outlives the keeper) is written whenever states() changes.
  MpsKeeper(Config config, Logger& logger, int changed_fd);
  // stop()
  ~MpsKeeper();
  MpsKeeper(const MpsKeeper&) = delete;
  MpsKeeper& operator=(const MpsKeeper&) = delete;

  // The groups to serve now, with their GPUs, and the GPUs' memory (nothing without NVML).
  // A group no longer given has its daemon stopped.
  void want(std::map<MpsGroup, std::vector<Gpu>> groups, std::optional<GpuMemory> memory);
  // Each group's state as of its last tick: a group not ticked yet is missing.
  [[nodiscard]] MpsStates states() const;
  // Stops every daemon and the thread.
  void stop();

 private:
  void run();
  // One tick of every supervisor, each one's state published after its tick (a daemon that
  // hangs holds up no other's news).
  void tick(const std::map<MpsGroup, std::vector<Gpu>>& groups,
            const std::optional<GpuMemory>& memory);
  // `state` as the group's, and the change said on changed_fd.
  void publish(const MpsGroup& group, MpsGroupState state);

  const Config config_;  // the supervisors' (a keeper can outlive the plugin that made it)
  Logger& logger_;
  int changed_fd_;
  // The worker's own: touched by no other thread.
  std::map<MpsGroup, std::unique_ptr<MpsSupervisor>> supervisors_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<MpsGroup, std::vector<Gpu>> wanted_;
  std::optional<GpuMemory> memory_;
  bool woken_ = false;
  bool stopping_ = false;
  MpsStates states_;
  std::thread thread_;
};

}  // namespace gcr
