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

Config allocation_config(std::vector<std::string> strategies, const std::string& ids = "uuid") {
  Config c;
  c.device_plugin.device_list = std::move(strategies);
  c.device_plugin.device_ids = ids;
  return c;
}

}  // namespace

TEST_CASE("each strategy in the form the runtime reads") {
  const Config env = allocation_config({"envvar"});
  auto a = gcr::allocate_container({"GPU-2", "GPU-0"}, devices(env, 4), env);
  REQUIRE(a.ok());
  CHECK(a->envs == std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", "GPU-2,GPU-0"}});
  CHECK(a->mounts.empty());

  const Config mounts = allocation_config({"volume-mounts"}, "index");
  a = gcr::allocate_container({"1"}, devices(mounts, 4), mounts);
  REQUIRE(a.ok());
  CHECK(a->envs.at("NVIDIA_VISIBLE_DEVICES") == "/var/run/nvidia-container-devices");
  CHECK(a->mounts == std::vector<gcr::AllocatedMount>{
                         {"/dev/null", "/var/run/nvidia-container-devices/1", false}});

  const Config cdi = allocation_config({"cdi-annotations", "cdi-cri"});
  a = gcr::allocate_container({"GPU-3"}, devices(cdi, 4), cdi);
  REQUIRE(a.ok());
  CHECK(a->envs.empty());
  CHECK(a->annotations ==
        std::map<std::string, std::string>{
            {"cdi.k8s.io/gpu-device-plugin_nvidia.com_gpu", "nvidia.com/gpu=GPU-3"}});
  CHECK(a->cdi_devices == std::vector<std::string>{"nvidia.com/gpu=GPU-3"});
}

// imex-channel: the channel in the form each strategy names, which the runtime (and, for CDI, the
// engine with `gpu-ctk cdi generate --mode imex`'s spec) reads.
TEST_CASE("IMEX channels go with the GPUs in each strategy's form, and never alone") {
  const gcr::AllocationExtras imex{{}, {0}};
  const Config env = allocation_config({"envvar"});
  auto a = gcr::allocate_container({"GPU-1"}, devices(env, 2), env, imex);
  REQUIRE(a.ok());
  CHECK(a->envs == std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", "GPU-1"},
                                                      {"NVIDIA_IMEX_CHANNELS", "0"}});

  const Config mounts = allocation_config({"volume-mounts"}, "index");
  a = gcr::allocate_container({"1"}, devices(mounts, 2), mounts, imex);
  REQUIRE(a.ok());
  CHECK(a->envs == std::map<std::string, std::string>{
                       {"NVIDIA_VISIBLE_DEVICES", "/var/run/nvidia-container-devices"}});
  CHECK(a->mounts == std::vector<gcr::AllocatedMount>{
                         {"/dev/null", "/var/run/nvidia-container-devices/1", false},
                         {"/dev/null", "/var/run/nvidia-container-devices/imex/0", false}});

  Config cdi = allocation_config({"cdi-annotations", "cdi-cri"});
  cdi.cdi.default_kind = "example.com/gpu";  // the channel's vendor is the GPUs'
  a = gcr::allocate_container({"GPU-0"}, devices(cdi, 2), cdi, imex);
  REQUIRE(a.ok());
  CHECK(a->envs.empty());
  CHECK(a->annotations ==
        std::map<std::string, std::string>{{"cdi.k8s.io/gpu-device-plugin_nvidia.com_gpu",
                                            "example.com/gpu=GPU-0,example.com/imex-channel=0"}});
  CHECK(a->cdi_devices ==
        std::vector<std::string>{"example.com/gpu=GPU-0", "example.com/imex-channel=0"});

  a = gcr::allocate_container({}, devices(env, 2), env, imex);  // a container given no GPU
  REQUIRE(a.ok());
  CHECK(a->envs == std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", ""}});
}

// The kubelet merges the answers for a container's resources, keeping the first of equal keys.
TEST_CASE("cdi-annotations: a key per resource (a GPU and a MIG profile in one container)") {
  const Config cdi = allocation_config({"cdi-annotations"});
  auto list = devices(cdi, 2);
  list[1].resource = "nvidia.com/mig-1g.10gb";
  const auto gpu = gcr::allocate_container({"GPU-0"}, list, cdi);
  const auto mig = gcr::allocate_container({"GPU-1"}, list, cdi);
  REQUIRE(gpu.ok());
  REQUIRE(mig.ok());
  CHECK(gpu->annotations ==
        std::map<std::string, std::string>{
            {"cdi.k8s.io/gpu-device-plugin_nvidia.com_gpu", "nvidia.com/gpu=GPU-0"}});
  CHECK(mig->annotations ==
        std::map<std::string, std::string>{
            {"cdi.k8s.io/gpu-device-plugin_nvidia.com_mig-1g.10gb", "nvidia.com/gpu=GPU-1"}});
}

TEST_CASE("unknown and unhealthy IDs are refused by name; replicas name their GPU once") {
  const Config config = allocation_config({"envvar"});
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

  Config shared = allocation_config({"envvar", "cdi-cri"});
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

TEST_CASE("mps: k shares of one GPU, the limits, pipe and shared memory of k; two GPUs refused") {
  Config mps = allocation_config({"envvar"});
  mps.device_plugin.sharing = "mps";
  mps.device_plugin.replicas = 8;
  mps.device_plugin.replicas_by_gpu = {{"1", 2}};
  mps.device_plugin.mps_root = "/run/mps";
  auto shares = devices(mps, 2);
  REQUIRE(shares.size() == 10);  // GPU 0 in 8 shares, GPU 1 in 2
  for (auto& d : shares) {
    for (std::int64_t k = 1; k <= d.replicas; ++k)
      d.mps_share_mib[k] = static_cast<std::uint64_t>(k) * (d.uuid == "GPU-0" ? 5120 : 20480);
  }
  auto one = gcr::allocate_container({"GPU-0::3"}, shares, mps);
  REQUIRE(one.ok());
  CHECK(one->envs ==
        std::map<std::string, std::string>{{"NVIDIA_VISIBLE_DEVICES", "GPU-0"},
                                           {"CUDA_MPS_PIPE_DIRECTORY", "/tmp/nvidia-mps"},
                                           {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "12"},
                                           {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "0=5120M"}});
  CHECK(one->mounts == std::vector<gcr::AllocatedMount>{
                           {"/run/mps/nvidia.com-gpu/1-of-8/pipe", "/tmp/nvidia-mps", true},
                           {"/dev/null", "/tmp/nvidia-mps/log", false},
                           {"/run/mps/nvidia.com-gpu/1-of-8/shm", "/dev/shm", false}});
  // Three shares of it: the daemon for containers of 3, three eighths.
  auto three = gcr::allocate_container({"GPU-0::3", "GPU-0::5", "GPU-0::0"}, shares, mps);
  REQUIRE(three.ok());
  CHECK(three->envs.at("NVIDIA_VISIBLE_DEVICES") == "GPU-0");
  CHECK(three->envs.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "37");
  CHECK(three->envs.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == "0=15360M");
  CHECK(three->mounts == std::vector<gcr::AllocatedMount>{
                             {"/run/mps/nvidia.com-gpu/3-of-8/pipe", "/tmp/nvidia-mps", true},
                             {"/dev/null", "/tmp/nvidia-mps/log", false},
                             {"/run/mps/nvidia.com-gpu/3-of-8/shm", "/dev/shm", false}});
  // A GPU of 2 shares: its own daemons, half of it, or all of it.
  auto half = gcr::allocate_container({"GPU-1::1"}, shares, mps);
  REQUIRE(half.ok());
  CHECK(half->envs.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "50");
  CHECK(half->envs.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == "0=20480M");
  CHECK(half->mounts[0].host == "/run/mps/nvidia.com-gpu/1-of-2/pipe");
  auto whole = gcr::allocate_container({"GPU-1::1", "GPU-1::0"}, shares, mps);
  REQUIRE(whole.ok());
  CHECK(whole->envs.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "100");
  CHECK(whole->envs.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == "0=40960M");
  CHECK(whole->mounts[0].host == "/run/mps/nvidia.com-gpu/2-of-2/pipe");
  // An ID named twice is one share.
  auto twice = gcr::allocate_container({"GPU-0::3", "GPU-0::3"}, shares, mps);
  REQUIRE(twice.ok());
  CHECK(twice->mounts[0].host == "/run/mps/nvidia.com-gpu/1-of-8/pipe");
  // No NVML memory figure: no memory limit, the thread share still.
  shares[0].mps_share_mib.clear();
  auto unknown = gcr::allocate_container({"GPU-0::0"}, shares, mps);
  REQUIRE(unknown.ok());
  CHECK(unknown->envs.count("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == 0);
  CHECK(unknown->envs.at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "12");
  // No IDs (found by the fuzzer): nothing to hand over, and no crash.
  auto none = gcr::allocate_container({}, shares, mps);
  REQUIRE(none.ok());
  CHECK(none->mounts.empty());
  // Shares of two GPUs: refused, naming each GPU's part, never spread silently: no GPU had
  // that many free, or none has that many.
  auto spread = gcr::allocate_container({"GPU-1::0", "GPU-0::0", "GPU-0::1"}, shares, mps);
  REQUIRE_FALSE(spread.ok());
  CHECK(spread.error().message ==
        "MPS gives a container shares of one GPU (its limits are one GPU's): the kubelet handed 3 "
        "shares of several GPUs (GPU-1: 1, GPU-0: 2), as no GPU had 3 free; wait for a GPU's "
        "shares to be free, or ask for fewer");
  // Where the kubelet said what was free when it asked for a preferred set of these: each GPU's
  // free shares then (in device order); not said for IDs it did not list.
  const std::vector<std::string> free{"GPU-1::0", "GPU-0::1", "GPU-1::1", "GPU-0::0"};
  spread = gcr::allocate_container({"GPU-1::0", "GPU-0::0", "GPU-0::1"}, shares, mps, {free, {}});
  REQUIRE_FALSE(spread.ok());
  CHECK(spread.error().message ==
        "MPS gives a container shares of one GPU (its limits are one GPU's): the kubelet handed 3 "
        "shares of several GPUs (GPU-1: 1, GPU-0: 2) (free when the kubelet last asked: GPU-0: 2, "
        "GPU-1: 2); wait for a GPU's shares to be free, or ask for fewer");
  spread = gcr::allocate_container({"GPU-1::0", "GPU-0::0", "GPU-0::2"}, shares, mps, {free, {}});
  REQUIRE_FALSE(spread.ok());
  CHECK(spread.error().message.find("when the kubelet last asked") == std::string::npos);
  std::vector<std::string> nine;
  for (int i = 0; i < 8; ++i) nine.push_back("GPU-0::" + std::to_string(i));
  nine.push_back("GPU-1::0");
  auto too_many = gcr::allocate_container(nine, shares, mps);
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.error().message ==
        "MPS gives a container shares of one GPU (its limits are one GPU's): the kubelet handed 9 "
        "shares of several GPUs (GPU-0: 8, GPU-1: 1), and a GPU has at most 8; ask for at most 8 "
        "nvidia.com/gpu");
}

TEST_CASE("replicas-by-gpu: a GPU's index wins over its model, the model over replicas") {
  Config c = allocation_config({"envvar"});
  c.device_plugin.replicas = 4;
  c.device_plugin.replicas_by_gpu = {{"Tesla T4", 2}, {"2", 1}};
  CHECK(c.replicas_for(0, "NVIDIA A100-SXM4-40GB") == 4);
  CHECK(c.replicas_for(1, "Tesla T4") == 2);
  CHECK(c.replicas_for(2, "Tesla T4") == 1);
  auto listed = devices(c, 3);
  REQUIRE(listed.size() == 9);  // the test's GPUs have no model: 4 + 4 + 1
  CHECK(listed[8].id == "GPU-2");
  CHECK(listed[8].replicas == 1);
  CHECK(listed[0].id == "GPU-0::0");
}
