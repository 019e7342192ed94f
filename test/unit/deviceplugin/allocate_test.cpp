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
