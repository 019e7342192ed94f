// sharing = "mps": the MPS control daemon of one advertised resource, kept serving its GPUs
// for the plugin's lifetime, and where containers find it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "driver/device_nodes.h"
#include "log/log.h"
#include "mps/mps_daemon.h"

namespace gcr {

// Where a container finds the daemon's pipe (MPS clients' default), and the host directories of
// the daemon for containers of `shares` of a resource's GPUs of `replicas` shares (mps_dir).
inline constexpr const char* kMpsContainerPipeDir = "/tmp/nvidia-mps";
// Why shares are Unhealthy before their daemons first serve.
inline constexpr const char* kMpsNotStarted = "the MPS control daemon is not started yet";
struct MpsDirs {
  std::string root;
  std::string pipe;
  std::string shm;
};
[[nodiscard]] MpsDirs mps_dirs(const Config& config, const std::string& resource,
                               std::int64_t replicas, std::int64_t shares);

// Each GPU's memory in MiB by UUID, as NVML says; no map at all where NVML is not loaded.
using GpuMemory = std::map<std::string, std::uint64_t>;

// What one daemon serves: containers of `shares` of the GPUs of `replicas` shares of a resource.
struct MpsGroup {
  std::string resource;
  std::int64_t replicas = 1;
  std::int64_t shares = 1;
  auto operator<=>(const MpsGroup&) const = default;
};

// The daemon of one MpsGroup. Started once there are such GPUs (its clients' defaults:
// shares/replicas of the threads, and of each GPU's memory where NVML says how much), watched
// every tick and asked whether it answers every 5 s (one share) or 30 s (more: the larger sizes
// are one daemon each, their questions spread over the 30 s), its log read every tick for
// commands a client sent that change its limits (set back at once), restarted after it dies with a
// backoff from 1 s doubling to 30 s, or when it does not answer and runs no client's server
// (one that does is kept, its GPUs Unhealthy until it answers), restarted for a changed set of
// GPUs, stopped by stop().
class MpsSupervisor {
 public:
  MpsSupervisor(const Config& config, MpsGroup group, Logger& logger);
  ~MpsSupervisor();
  MpsSupervisor(const MpsSupervisor&) = delete;
  MpsSupervisor& operator=(const MpsSupervisor&) = delete;

  // Keeps the daemon serving `gpus`. Blocks while the daemon is asked (5 s at most), stopped
  // (10 s) or started (5 s).
  void tick(const std::vector<Gpu>& gpus, const GpuMemory* memory);
  // Why the daemon does not serve ("" while it does): its GPUs are Unhealthy meanwhile.
  [[nodiscard]] const std::string& problem() const { return problem_; }
  // The GPUs (UUIDs) the daemon serves now: none while it is down.
  [[nodiscard]] std::set<std::string> serving() const;
  // Its clients' pinned memory on each GPU (by UUID) where it is limited.
  [[nodiscard]] const std::map<std::string, std::uint64_t>& shares_mib() const {
    return share_mib_;
  }
  void stop();

 private:
  using Clock = std::chrono::steady_clock;
  Result<MpsPlan> plan_for(const std::vector<Gpu>& gpus, const GpuMemory* memory) const;
  void start(const std::vector<Gpu>& gpus, const GpuMemory* memory);
  void failed(const std::string& why);
  // failed(), or unanswered() where restarting the daemon would end clients' work.
  void trouble(const std::string& why);
  void unanswered(const std::string& why);
  void answered();
  // An adopted daemon an earlier plugin started with another environment: kept while it runs
  // servers, replaced once it runs none; false when it could not be.
  bool renew_outdated();
  void limit_memory(const std::vector<Gpu>& gpus, const GpuMemory* memory);
  void guard_limits();
  // Remembers each GPU's share of memory; says what a client gets, for the log.
  std::string keep_shares(const std::vector<MpsGpu>& gpus);
  // "nvidia.com/gpu (containers of 2 of 4 shares)": for the log.
  [[nodiscard]] std::string serves() const;

  const Config& config_;
  MpsGroup group_;
  Logger& logger_;
  Clock::duration ask_every_;
  std::unique_ptr<MpsDaemon> daemon_;
  std::string serving_;         // the UUIDs the running daemon serves, comma-separated
  std::size_t sized_gpus_ = 0;  // GPUs whose memory its limits include (NVML told how much)
  bool outdated_said_ = false;  // the warning that an outdated daemon is kept, said once
  std::map<std::string, std::uint64_t> share_mib_;
  std::string problem_ = kMpsNotStarted;
  Clock::time_point next_start_{};
  Clock::time_point next_ask_{};
  std::chrono::seconds backoff_{1};
};

}  // namespace gcr
