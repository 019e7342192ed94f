// The device plugin's inputs: the kubelet's Allocate and GetPreferredAllocation requests as
// protobuf bytes, answered against a fixed device list (two of the eight GPUs unhealthy,
// replicas on, two NVLink quads). Preferred answers, under every allocation policy, are always a
// subset of available, of the asked size or empty.
#include <algorithm>
#include <set>

#include "config/config.h"
#include "deviceplugin/allocate.h"
#include "deviceplugin/api.pb.h"
#include "deviceplugin/preferred.h"
#include "fuzz.h"
#include "mps/mps_daemon.h"

namespace {

const std::vector<gcr::PluginDevice>& devices() {
  static const std::vector<gcr::PluginDevice> list = [] {
    gcr::Config config;
    config.device_plugin.replicas = 2;
    std::vector<gcr::Gpu> gpus;
    for (unsigned i = 0; i < 8; ++i) {
      gcr::Gpu gpu;
      gpu.index = i;
      gpu.uuid = "GPU-" + std::to_string(i);
      gpus.push_back(gpu);
    }
    auto out = gcr::devices_of(gpus, {}, config).value();
    for (auto& d : out) d.healthy = d.uuid != "GPU-3" && d.uuid != "GPU-6";
    return out;
  }();
  return list;
}

// GPUs 0-3 and 4-7 linked in quads by two NVLinks each, the quads joined across the system.
const gcr::Topology& topology() {
  static const gcr::Topology quads = [] {
    gcr::Topology t;
    t.source = "fuzz";
    for (unsigned i = 0; i < 8; ++i) {
      t.uuids.push_back("GPU-" + std::to_string(i));
      t.numa.emplace_back(i / 4);
    }
    t.nvlinks.assign(8, std::vector<int>(8, 0));
    t.pcie.assign(8, std::vector<gcr::PcieRelation>(8, gcr::PcieRelation::kSystem));
    for (unsigned i = 0; i < 8; ++i) {
      for (unsigned j = 0; j < 8; ++j) {
        if (i != j && i / 4 == j / 4) {
          t.nvlinks[i][j] = 2;
          t.pcie[i][j] = gcr::PcieRelation::kHostBridge;
        }
      }
    }
    return t;
  }();
  return quads;
}

const char* policy_of(std::size_t size) {
  static const char* const policies[] = {"topology", "packed", "distributed"};
  return policies[size % 3];
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gcr::Config config;
  config.device_plugin.device_list = {"envvar", "volume-mounts", "cdi-annotations", "cdi-cri"};
  gcr::Config mps = config;
  mps.device_plugin.sharing = "mps";
  v1beta1::AllocateRequest allocate;
  if (allocate.ParseFromArray(data, static_cast<int>(size))) {
    for (const auto& c : allocate.container_requests()) {
      const std::vector<std::string> ids(c.devices_ids().begin(), c.devices_ids().end());
      (void)gcr::allocate_container(ids, devices(), config);
      // MPS: an answer names one GPU, never more than all of its threads, and the daemon for
      // containers of as many shares as distinct IDs.
      // What the kubelet said was free when it asked: here the handed IDs, in reverse.
      const std::vector<std::string> free(c.devices_ids().rbegin(), c.devices_ids().rend());
      if (auto told = gcr::allocate_container(ids, devices(), mps, {free, {}}); !told)
        gcr::fuzz::require(!told.error().message.empty());
      if (auto shared = gcr::allocate_container(ids, devices(), mps); shared && !ids.empty()) {
        const auto& pct = shared->envs.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
        gcr::fuzz::require(std::stoi(pct) >= 1 && std::stoi(pct) <= 100);
        const std::set<std::string> distinct(ids.begin(), ids.end());
        const auto pipe =
            std::find_if(shared->mounts.begin(), shared->mounts.end(),
                         [](const auto& m) { return m.container == "/tmp/nvidia-mps"; });
        const auto k = static_cast<std::int64_t>(distinct.size());
        gcr::fuzz::require(pipe != shared->mounts.end() && pipe->read_only &&
                           pipe->host.ends_with("/" + std::to_string(k) + "-of-2/pipe"));
        gcr::fuzz::require(std::stoi(pct) == static_cast<int>(gcr::share_percentage(2, k)));
        gcr::fuzz::require(shared->envs.at("NVIDIA_VISIBLE_DEVICES").find(',') ==
                           std::string::npos);
      }
    }
  }
  config.device_plugin.allocation = policy_of(size);
  config.device_plugin.replicas_on_distinct_gpus = size % 2 == 0;
  if (size % 5 == 0) config.device_plugin.sharing = "mps";
  v1beta1::PreferredAllocationRequest preferred;
  if (preferred.ParseFromArray(data, static_cast<int>(size))) {
    for (const auto& c : preferred.container_requests()) {
      const std::vector<std::string> available(c.available_deviceids().begin(),
                                               c.available_deviceids().end());
      const auto chosen = gcr::preferred_allocation(
          {available,
           {c.must_include_deviceids().begin(), c.must_include_deviceids().end()},
           c.allocation_size()},
          devices(), topology(), config);
      const std::set<std::string> pool(available.begin(), available.end());
      gcr::fuzz::require(chosen.empty() || static_cast<int>(chosen.size()) == c.allocation_size());
      for (const auto& id : chosen) gcr::fuzz::require(pool.count(id) == 1);
    }
  }
  return 0;
}
