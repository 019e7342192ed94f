#include <doctest/doctest.h>

#include "deviceplugin/allocate.h"
#include "deviceplugin/devices.h"

using gcr::Config;
using gcr::PluginDevice;

namespace {

std::vector<PluginDevice> devices(const Config& config, unsigned count) {
  std::vector<gcr::Gpu> gpus;
  for (unsigned i = 0; i < count; ++i) {
    gcr::Gpu gpu;
    gpu.index = i;
    gpu.uuid = "GPU-" + std::to_string(i);
    gpu.minor = i;
    gpus.push_back(gpu);
  }
  auto devices = gcr::devices_of(gpus, {}, config);
  REQUIRE(devices.ok());
  return *devices;
}

Config with(std::vector<std::string> strategies, const std::string& ids = "uuid") {
  Config c;
  c.device_plugin.device_list = std::move(strategies);
  c.device_plugin.device_ids = ids;
  return c;
}

}  // namespace

TEST_CASE("each strategy in the form the runtime reads") {
  const Config env = with({"envvar"});
  auto a = gcr::allocate_container({"GPU-2", "GPU-0"}, devices(env, 4), env);
  REQUIRE(a.ok());
  CHECK(a->envs == std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", "GPU-2,GPU-0"}});
  CHECK(a->mounts.empty());

  const Config mounts = with({"volume-mounts"}, "index");
  a = gcr::allocate_container({"1"}, devices(mounts, 4), mounts);
  REQUIRE(a.ok());
  CHECK(a->envs.at("NVIDIA_VISIBLE_DEVICES") == "/var/run/nvidia-container-devices");
  CHECK(a->mounts == std::vector<std::pair<std::string, std::string>>{
                         {"/dev/null", "/var/run/nvidia-container-devices/1"}});

  const Config cdi = with({"cdi-annotations", "cdi-cri"});
  a = gcr::allocate_container({"GPU-3"}, devices(cdi, 4), cdi);
  REQUIRE(a.ok());
  CHECK(a->envs.empty());
  CHECK(a->annotations ==
        std::map<std::string, std::string>{
            {"cdi.k8s.io/gpu-device-plugin_nvidia.com_gpu", "nvidia.com/gpu=GPU-3"}});
  CHECK(a->cdi_devices == std::vector<std::string>{"nvidia.com/gpu=GPU-3"});
}

TEST_CASE("unknown and unhealthy IDs are refused by name; replicas name their GPU once") {
  const Config config = with({"envvar"});
  auto list = devices(config, 2);
  auto unknown = gcr::allocate_container({"GPU-0", "GPU-9"}, list, config);
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message == "unknown device `GPU-9`");
  list[1].healthy = false;
  list[1].unhealthy_because = "its device node is gone (/dev/nvidia1)";
  auto sick = gcr::allocate_container({"GPU-1"}, list, config);
  REQUIRE_FALSE(sick.ok());
  CHECK(sick.error().message ==
        "device `GPU-1` is unhealthy: its device node is gone (/dev/nvidia1)");

  Config shared = with({"envvar", "cdi-cri"});
  shared.device_plugin.replicas = 3;
  const auto replicas = devices(shared, 2);
  REQUIRE(replicas.size() == 6);
  CHECK(replicas[4].id == "GPU-1::1");
  auto refused = gcr::allocate_container({"GPU-1::2", "GPU-0::1", "GPU-1::0"}, replicas, shared);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message ==
        "devices `GPU-1::2` and `GPU-1::0` are replicas of one GPU (GPU-1); [device-plugin] "
        "replicas-on-distinct-gpus gives a request different GPUs");
  auto a = gcr::allocate_container({"GPU-1::2", "GPU-0::1"}, replicas, shared);
  REQUIRE(a.ok());
  CHECK(a->envs.at("NVIDIA_VISIBLE_DEVICES") == "GPU-1,GPU-0");
  CHECK(a->cdi_devices == std::vector<std::string>{"nvidia.com/gpu=GPU-1", "nvidia.com/gpu=GPU-0"});
  shared.device_plugin.replicas_on_distinct_gpus = false;
  a = gcr::allocate_container({"GPU-1::2", "GPU-1::0", "GPU-0::1"}, replicas, shared);
  REQUIRE(a.ok());
  CHECK(a->envs.at("NVIDIA_VISIBLE_DEVICES") == "GPU-1,GPU-0");  // each physical GPU once
}

TEST_CASE("mps: k shares of one GPU get k shares' limits; shares of two GPUs are refused") {
  Config mps = with({"envvar"});
  mps.device_plugin.sharing = "mps";
  mps.device_plugin.replicas = 8;
  mps.device_plugin.mps_root = "/run/mps";
  auto shares = devices(mps, 2);
  for (auto& d : shares) d.mps_share_mib = 5120;
  auto two = gcr::allocate_container({"GPU-1::3", "GPU-1::5"}, shares, mps);
  REQUIRE(two.ok());
  CHECK(two->envs ==
        std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", "GPU-1"},
                                           {"CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps"},
                                           {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "24"},
                                           {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=10240M"}});
  CHECK(two->mounts == std::vector<std::pair<std::string, std::string>>{
                           {"/run/mps/nvidia.com-gpu/pipe", "/tmp/nvidia-mps"},
                           {"/run/mps/nvidia.com-gpu/shm", "/dev/shm"}});
  // Every share: at most 100 %.
  std::vector<std::string> all;
  for (int i = 0; i < 8; ++i) all.push_back("GPU-0::" + std::to_string(i));
  auto whole = gcr::allocate_container(all, shares, mps);
  REQUIRE(whole.ok());
  CHECK(whole->envs.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "96");
  // No NVML memory figure: no memory limit, the thread share still.
  shares[0].mps_share_mib.reset();
  auto unknown = gcr::allocate_container({"GPU-0::0"}, shares, mps);
  REQUIRE(unknown.ok());
  CHECK(unknown->envs.count("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == 0);
  // No IDs (found by the fuzzer): nothing to hand over, and no crash.
  auto none = gcr::allocate_container({}, shares, mps);
  REQUIRE(none.ok());
  CHECK(none->mounts.empty());
  auto spread = gcr::allocate_container({"GPU-0::0", "GPU-1::0"}, shares, mps);
  REQUIRE_FALSE(spread.ok());
  CHECK(spread.error().message ==
        "MPS shares of one request come from one GPU: 2 shares span 2 GPUs (GPU-0, GPU-1, ...); "
        "each GPU has 8 shares");
}
