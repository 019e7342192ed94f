#include "deviceplugin/mps_supervisor.h"

#include <algorithm>
#include <utility>

#include "base/node_stat.h"
#include "base/text.h"

namespace gcr {
namespace {

constexpr auto kAskEvery = std::chrono::seconds(5);
constexpr auto kLastBackoff = std::chrono::seconds(30);

// What the daemon's plan depends on: the GPUs, and whether NVML can tell their memory (once it
// can, the daemon is started again with memory limits).
std::string plan_key(const std::vector<Gpu>& gpus, const Nvml* nvml) {
  std::vector<std::string> uuids;
  for (const auto& gpu : gpus) uuids.push_back(gpu.uuid);
  return join(uuids, ",") + (nvml != nullptr ? "" : " without NVML");
}

}  // namespace

MpsDirs mps_dirs(const Config& config, const std::string& resource) {
  const std::string root = mps_resource_dir(config.device_plugin.mps_root, resource);
  return MpsDirs{root, root + "/pipe", root + "/shm"};
}

MpsSupervisor::MpsSupervisor(const Config& config, std::string resource, Logger& logger)
    : config_(config), resource_(std::move(resource)), logger_(logger) {}

MpsSupervisor::~MpsSupervisor() {
  stop();
}

std::optional<std::uint64_t> MpsSupervisor::share_mib(const std::string& uuid) const {
  const auto it = share_mib_.find(uuid);
  return it == share_mib_.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
}

Result<MpsPlan> MpsSupervisor::plan_for(const std::vector<Gpu>& gpus, Nvml* nvml) const {
  DriverHost host(config_.driver, lstat_node);
  const auto program = mps_control_program(host);
  if (!program)
    return Error{"no nvidia-cuda-mps-control in the driver root (" + host.driver_path("/") +
                 "): install NVIDIA's MPS (nvidia-cuda-mps)"};
  MpsPlan plan;
  plan.program = *program;
  plan.dir = mps_dirs(config_, resource_).root;
  plan.thread_percentage = share_percentage(config_.device_plugin.replicas);
  for (const auto& gpu : gpus) {
    MpsGpu share{gpu.uuid, std::nullopt};
    if (nvml != nullptr) {
      if (const auto memory = nvml->memory_mib(gpu.bus))
        share.pinned_mib = gcr::share_mib(*memory, config_.device_plugin.replicas);
    }
    plan.gpus.push_back(share);
  }
  return plan;
}

void MpsSupervisor::failed(const std::string& why) {
  if (daemon_) daemon_->stop();
  daemon_.reset();
  serving_.clear();
  if (problem_ != why)
    logger_.warning(why + "; " + resource_ + " is Unhealthy, starting the daemon again in " +
                    std::to_string(backoff_.count()) + "s");
  problem_ = why;
  next_start_ = Clock::now() + backoff_;
  backoff_ = std::min(backoff_ * 2, kLastBackoff);
}

void MpsSupervisor::start(const std::vector<Gpu>& gpus, Nvml* nvml) {
  auto plan = plan_for(gpus, nvml);
  if (!plan) return failed(plan.error().message);
  daemon_ = std::make_unique<MpsDaemon>(*plan);
  if (auto s = daemon_->start(); !s) return failed(s.error().message);
  serving_ = plan_key(gpus, nvml);
  share_mib_.clear();
  std::string memory = "memory not limited (NVML does not say how much there is)";
  for (const auto& gpu : plan->gpus) {
    if (!gpu.pinned_mib) continue;
    share_mib_[gpu.uuid] = *gpu.pinned_mib;
    memory = std::to_string(*gpu.pinned_mib) + " MiB of pinned memory";
  }
  logger_.info("MPS control daemon serving " + std::to_string(gpus.size()) + " GPUs of " +
               resource_ + ": each of " + std::to_string(config_.device_plugin.replicas) +
               " shares gets " + std::to_string(plan->thread_percentage) + "% of the threads and " +
               memory + " (" + plan->pipe_dir() + ")");
  problem_.clear();
  backoff_ = std::chrono::seconds(1);
  next_ask_ = Clock::now() + kAskEvery;
}

bool MpsSupervisor::tick(const std::vector<Gpu>& gpus, Nvml* nvml) {
  const std::string before = problem_;
  const auto now = Clock::now();
  if (daemon_ && serving_ != plan_key(gpus, nvml)) {
    logger_.info("the GPUs of " + resource_ +
                 " or what NVML tells of them changed: restarting the MPS control daemon");
    daemon_->stop();
    daemon_.reset();
    next_start_ = now;
  }
  if (!daemon_) {
    if (!gpus.empty() && now >= next_start_) start(gpus, nvml);
  } else if (auto s = daemon_->check(now >= next_ask_); !s) {
    failed(s.error().message);
  } else if (now >= next_ask_) {
    next_ask_ = now + kAskEvery;
  }
  return problem_ != before;
}

void MpsSupervisor::stop() {
  if (!daemon_) return;
  daemon_->stop();
  daemon_.reset();
  logger_.info("stopped the MPS control daemon of " + resource_);
}

}  // namespace gcr
