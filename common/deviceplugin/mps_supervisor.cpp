#include "deviceplugin/mps_supervisor.h"

#include <algorithm>
#include <utility>

#include "base/node_stat.h"
#include "base/text.h"
#include "driver/host.h"

namespace gcr {
namespace {

constexpr auto kAskOneShare = std::chrono::seconds(5);
constexpr auto kAskLarger = std::chrono::seconds(30);
constexpr auto kLastBackoff = std::chrono::seconds(30);

// The GPUs a daemon serves (its CUDA_VISIBLE_DEVICES): another set needs another daemon.
std::string uuids_of(const std::vector<Gpu>& gpus) {
  std::vector<std::string> uuids;
  for (const auto& gpu : gpus) uuids.push_back(gpu.uuid);
  return join(uuids, ",");
}

// How many of `gpus` NVML says the memory of.
std::size_t sized(const std::vector<Gpu>& gpus, const GpuMemory* memory) {
  if (memory == nullptr) return 0;
  return static_cast<std::size_t>(std::count_if(
      gpus.begin(), gpus.end(), [&](const Gpu& g) { return memory->count(g.uuid) != 0; }));
}

}  // namespace

MpsDirs mps_dirs(const Config& config, const std::string& resource, std::int64_t replicas,
                 std::int64_t shares) {
  const std::string root = mps_dir(config.device_plugin.mps_root, resource, replicas, shares);
  return MpsDirs{root, root + "/pipe", root + "/shm"};
}

MpsSupervisor::MpsSupervisor(const Config& config, MpsGroup group, Logger& logger)
    : config_(config),
      group_(std::move(group)),
      logger_(logger),
      ask_every_(group_.shares == 1 ? Clock::duration(kAskOneShare) : Clock::duration(kAskLarger)) {
}

MpsSupervisor::~MpsSupervisor() {
  stop();
}

std::set<std::string> MpsSupervisor::serving() const {
  std::set<std::string> uuids;
  if (!daemon_ || serving_.empty()) return uuids;
  for (const auto& uuid : split(serving_, ',')) uuids.insert(std::string(uuid));
  return uuids;
}

Result<MpsPlan> MpsSupervisor::plan_for(const std::vector<Gpu>& gpus,
                                        const GpuMemory* memory) const {
  DriverHost host(config_.driver, lstat_node);
  const auto program = mps_control_program(host);
  if (!program)
    return Error{"no nvidia-cuda-mps-control in the driver root (" + host.files().driver_path("/") +
                 "): install NVIDIA's MPS (nvidia-cuda-mps)"};
  auto driver = mps_driver_links(host);
  if (!driver) return driver.error();
  MpsPlan plan;
  plan.program = *program;
  plan.driver = std::move(*driver);
  plan.root = config_.device_plugin.mps_root;
  plan.dir = mps_dirs(config_, group_.resource, group_.replicas, group_.shares).root;
  plan.thread_percentage = share_percentage(group_.replicas, group_.shares);
  for (const auto& gpu : gpus) {
    MpsGpu share{gpu.uuid, std::nullopt};
    if (memory != nullptr) {
      if (const auto mib = memory->find(gpu.uuid); mib != memory->end())
        share.pinned_mib = gcr::share_mib(mib->second, group_.replicas, group_.shares);
    }
    plan.gpus.push_back(share);
  }
  return plan;
}

std::string MpsSupervisor::keep_shares(const std::vector<MpsGpu>& gpus) {
  share_mib_.clear();
  std::string memory = "memory not limited (NVML does not say how much there is)";
  for (const auto& gpu : gpus) {
    if (!gpu.pinned_mib) continue;
    share_mib_[gpu.uuid] = *gpu.pinned_mib;
    memory = std::to_string(*gpu.pinned_mib) + " MiB of pinned memory";
  }
  return memory;
}

// NVML came after the daemon, or told more GPUs' memory: the same daemon, its clients running,
// gets memory limits, its running servers too.
void MpsSupervisor::limit_memory(const std::vector<Gpu>& gpus, const GpuMemory* memory) {
  auto plan = plan_for(gpus, memory);
  if (!plan) return trouble(plan.error().message);
  if (auto s = daemon_->update_limits(plan->gpus); !s) return trouble(s.error().message);
  sized_gpus_ = sized(gpus, memory);
  logger_.info("MPS control daemon of " + serves() + ": each client now " +
               keep_shares(plan->gpus));
}

void MpsSupervisor::failed(const std::string& why) {
  if (daemon_) daemon_->stop();
  daemon_.reset();
  serving_.clear();
  if (problem_ != why)
    logger_.warning(why + " (" + serves() + "); " + group_.resource +
                    " is Unhealthy, starting the daemon again in " +
                    std::to_string(backoff_.count()) + "s");
  problem_ = why;
  next_start_ = Clock::now() + backoff_;
  backoff_ = std::min(backoff_ * 2, kLastBackoff);
}

void MpsSupervisor::start(const std::vector<Gpu>& gpus, const GpuMemory* memory) {
  auto plan = plan_for(gpus, memory);
  if (!plan) return failed(plan.error().message);
  daemon_ = std::make_unique<MpsDaemon>(*plan);
  if (auto s = daemon_->start(); !s) return failed(s.error().message);
  if (!renew_outdated()) return;
  serving_ = uuids_of(gpus);
  sized_gpus_ = sized(gpus, memory);
  const std::string limits = keep_shares(plan->gpus);
  logger_.info("MPS control daemon serving " + std::to_string(gpus.size()) + " GPUs of " +
               group_.resource + ": each client of " + std::to_string(group_.shares) + " of " +
               std::to_string(group_.replicas) + " shares gets " +
               std::to_string(plan->thread_percentage) + "% of the threads and " + limits + " (" +
               plan->pipe_dir() + ")");
  problem_.clear();
  backoff_ = std::chrono::seconds(1);
  // The larger sizes' daemons asked a second apart, not all on one tick.
  next_ask_ = Clock::now() + ask_every_ + std::chrono::seconds(group_.shares - 1);
}

void MpsSupervisor::tick(const std::vector<Gpu>& gpus, const GpuMemory* memory) {
  const auto now = Clock::now();
  if (daemon_ && !gpus.empty() && serving_ != uuids_of(gpus)) {
    logger_.info("the GPUs of " + serves() + " changed: restarting the MPS control daemon");
    daemon_->stop();
    daemon_.reset();
    next_start_ = now;
  } else if (daemon_ && sized(gpus, memory) > sized_gpus_ && problem_.empty()) {
    limit_memory(gpus, memory);
  }
  if (gpus.empty()) {
    stop();
    problem_.clear();
  } else if (!daemon_) {
    if (now >= next_start_) start(gpus, memory);
  } else if (auto s = daemon_->check(now >= next_ask_); !s) {
    trouble(s.error().message);
  } else if (renew_outdated()) {
    if (now >= next_ask_) answered();
    // Kept without answering: its limits are looked at once it answers.
    if (problem_.empty()) guard_limits();
  }
}

// A daemon an earlier plugin started with another environment (before the driver links, its new
// servers fail where the driver is not in the host's directories) is kept while it runs servers
// (replacing it would end their clients' work; their clients keep being served), and replaced
// once it runs none. False when replacing it failed.
bool MpsSupervisor::renew_outdated() {
  if (!daemon_->outdated()) return true;
  if (daemon_->runs_servers()) {
    if (!outdated_said_)
      logger_.warning("the MPS control daemon of " + serves() +
                      " was started by an earlier plugin, without this one's environment (an "
                      "earlier version's, without the driver links, or other GPUs): kept while "
                      "it runs servers, replaced once it runs none");
    outdated_said_ = true;
    return true;
  }
  logger_.info("the MPS control daemon of " + serves() +
               " an earlier plugin started, without this one's environment, runs no server: "
               "replaced");
  outdated_said_ = false;
  daemon_->stop();
  if (auto s = daemon_->start(); !s) {
    failed(s.error().message);
    return false;
  }
  return true;
}

void MpsSupervisor::trouble(const std::string& why) {
  if (daemon_ && daemon_->runs_servers())
    unanswered(why);
  else
    failed(why);
}

// A daemon that runs clients' servers but does not answer (a client holding its control socket
// holds every other one back, ours too): restarting it would end every client's work on its
// GPUs, so it is kept, its GPUs Unhealthy (a new client would wait as we did) until it answers.
void MpsSupervisor::unanswered(const std::string& why) {
  const std::string problem = why + "; kept running for its clients";
  if (problem_ != problem)
    logger_.warning(problem + " (" + serves() + "); " + group_.resource +
                    " is Unhealthy until it answers (a client holding its control socket holds "
                    "every other one back)");
  problem_ = problem;
  next_ask_ = Clock::now() + ask_every_;
}

void MpsSupervisor::answered() {
  if (!problem_.empty()) {
    logger_.info("the MPS control daemon of " + serves() + " answers again");
    problem_.clear();
  }
  next_ask_ = Clock::now() + ask_every_;
}

// A client that sent the daemon a command changing its limits: set back on this tick.
void MpsSupervisor::guard_limits() {
  auto undone = daemon_->restore_changed_limits();
  if (!undone)
    return trouble("cannot set back the limits a client changed: " + undone.error().message);
  if (!undone->empty())
    logger_.warning("a client changed the limits of the MPS control daemon of " + serves() + " (`" +
                    *undone + "`): set back to " +
                    std::to_string(daemon_->plan().thread_percentage) + "% of the threads and " +
                    keep_shares(daemon_->plan().gpus));
}

void MpsSupervisor::stop() {
  if (!daemon_) return;
  daemon_->stop();
  daemon_.reset();
  logger_.info("stopped the MPS control daemon of " + serves());
}

std::string MpsSupervisor::serves() const {
  return group_.resource + " (containers of " + std::to_string(group_.shares) + " of " +
         std::to_string(group_.replicas) + " shares)";
}

}  // namespace gcr
