// sharing = "mps": the MPS control daemon of one advertised resource, kept serving its GPUs
// for the plugin's lifetime, and where containers find it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "driver/host.h"
#include "driver/nvml.h"
#include "log/log.h"
#include "mps/mps_daemon.h"

namespace gcr {

// Where a container finds the daemon's pipe (MPS clients' default), and the host directories of
// a resource's daemon: <mps-root>/<resource with '/' as '-'>.
inline constexpr const char* kMpsContainerPipeDir = "/tmp/nvidia-mps";
struct MpsDirs {
  std::string root;
  std::string pipe;
  std::string shm;
};
[[nodiscard]] MpsDirs mps_dirs(const Config& config, const std::string& resource);

// Started once the resource has GPUs (one share: 1/replicas of the threads, and of each GPU's
// memory where NVML says how much), asked every 5 s whether it answers and watched every tick,
// restarted after it dies with a backoff from 1 s doubling to 30 s, restarted for a changed set
// of GPUs, stopped by stop().
class MpsSupervisor {
 public:
  MpsSupervisor(const Config& config, std::string resource, Logger& logger);
  ~MpsSupervisor();
  MpsSupervisor(const MpsSupervisor&) = delete;
  MpsSupervisor& operator=(const MpsSupervisor&) = delete;

  // Keeps the daemon serving `gpus`; true when problem() changed.
  bool tick(const std::vector<Gpu>& gpus, Nvml* nvml);
  // Why the daemon does not serve ("" while it does): its GPUs are Unhealthy meanwhile.
  [[nodiscard]] const std::string& problem() const { return problem_; }
  // One share's pinned memory on a GPU, when known.
  [[nodiscard]] std::optional<std::uint64_t> share_mib(const std::string& uuid) const;
  void stop();

 private:
  using Clock = std::chrono::steady_clock;
  Result<MpsPlan> plan_for(const std::vector<Gpu>& gpus, Nvml* nvml) const;
  void start(const std::vector<Gpu>& gpus, Nvml* nvml);
  void failed(const std::string& why);

  const Config& config_;
  std::string resource_;
  Logger& logger_;
  std::unique_ptr<MpsDaemon> daemon_;
  std::string serving_;  // what the running daemon's plan was made from
  std::map<std::string, std::uint64_t> share_mib_;
  std::string problem_ = "the MPS control daemon is not started yet";
  Clock::time_point next_start_{};
  Clock::time_point next_ask_{};
  std::chrono::seconds backoff_{1};
};

}  // namespace gcr
