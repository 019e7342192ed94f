// gpu-device-plugin's choices (issue 14), with the stub NVML describing real machines'
// topologies, MIG devices and Xid events: preferred sets from NVML and from sysfs alone,
// gpu-ctk info --topology, time-slicing that keeps a request on distinct GPUs, the MIG
// strategies through Allocate and then through the shim, health from Xid events with recovery
// after a reset, and a MIG layout that changes. Needs root.
#include <doctest/doctest.h>

#include <unistd.h>

#include <boost/filesystem.hpp>

#include <algorithm>
#include <cctype>
#include <set>

#include "cdi_fixture.h"
#include "containerd.h"
#include "plugin_fixture.h"
#include "topology_fixtures.h"

using gcr::Json;
using gcr::test::Devices;
using gcr::test::health_of;
using gcr::test::ids_of;
using gcr::test::PluginFixture;
using Ids = std::vector<std::string>;
using namespace std::chrono_literals;

template <>
struct doctest::StringMaker<Ids> {
  static doctest::String convert(const Ids& ids) {
    std::string out = "{";
    for (const auto& id : ids) out += (out.size() > 1 ? "," : "") + id;
    return (out + "}").c_str();
  }
};

namespace {

using gcr::test::require_root;

constexpr auto kTopologyWait = 10s;
const std::string kMig = "nvidia.com/mig-1g.5gb";
const auto any_device = [](const Devices& d) { return !d.empty(); };
const std::string kMigUuid1 = "MIG-5eed003b-0000-4000-8000-000000000001";  // GI 2, CI 0

Ids preferred(PluginFixture& f, const Ids& available, const Ids& must, int size,
              const std::string& resource = "nvidia.com/gpu") {
  v1beta1::PreferredAllocationResponse response;
  REQUIRE(f.kubelet->preferred(available, must, size, response, resource).ok());
  const auto& ids = response.container_responses(0).deviceids();
  Ids out(ids.begin(), ids.end());
  std::sort(out.begin(), out.end());
  return out;
}

// A plugin on a simulated host shaped like fixture `name`, NVML describing it.
struct TopologyPlugin : PluginFixture {
  explicit TopologyPlugin(const std::string& name,
                          const Json& config = Json{{"device-ids", "index"}})
      : PluginFixture(config, gcr::test::host_options(gcr::test::topology_fixture(name))) {
    describe_nvml(gcr::test::stub_description(gcr::test::topology_fixture(name), host));
  }
};

}  // namespace

TEST_CASE("DGX-1 through NVML: the best-connected set, with must_include kept") {
  require_root();
  TopologyPlugin f("dgx1");
  f.start();
  CHECK(f.logged("topology of 8 GPUs read from NVML"));
  const Ids all = ids_of(f.kubelet->devices());
  CHECK(preferred(f, all, {}, 2) == Ids{"2", "3"});
  CHECK(preferred(f, all, {}, 4) == Ids{"0", "1", "2", "3"});
  CHECK(preferred(f, all, {"4"}, 2) == Ids{"4", "7"});
  CHECK(preferred(f, all, {"4"}, 4) == Ids{"4", "5", "6", "7"});
  CHECK(preferred(f, {"0", "2", "4", "5"}, {}, 2) == Ids{"0", "4"});
  CHECK(preferred(f, all, {}, 8) == all);
}

TEST_CASE("without NVML, sysfs alone (PCI paths, NUMA) still ranks the sets") {
  require_root();
  PluginFixture f(Json{{"device-ids", "index"}},
                  gcr::test::host_options(gcr::test::topology_fixture("pcie4")));
  for (const std::string& lib :
       {std::string("libnvidia-ml.so.1"), "libnvidia-ml.so." + f.host.version()})
    ::unlink((f.host.driver_root() + f.host.lib_dir() + "/" + lib).c_str());
  f.start();
  CHECK(f.logged("NVML unavailable"));
  CHECK(f.logged("topology of 4 GPUs read from sysfs"));
  CHECK(preferred(f, {"0", "2", "3"}, {}, 2) == Ids{"2", "3"});
  CHECK(preferred(f, {"0", "1", "2", "3"}, {"1"}, 2) == Ids{"0", "1"});
}

TEST_CASE("gpu-ctk info --topology prints the matrix the plugin uses") {
  require_root();
  const auto& fixture = gcr::test::topology_fixture("dgx1");
  gcr::test::GpuFixture f(gcr::test::host_options(fixture));
  gcr::test::write_file(f.path("nvml"), gcr::test::stub_description(fixture, f.host()));
  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
  env.env["GCR_STUB_NVML"] = f.path("nvml");
  const auto r = gcr::test::run({gcr::test::built("gpu-ctk"), "info", "--topology"}, env);
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("      GPU0  GPU1  GPU2  GPU3  GPU4  GPU5  GPU6  GPU7  NUMA\n") == 0);
  CHECK(r.out.find("GPU0  X     NV1   NV1   NV2   NV2   SYS   SYS   SYS   0\n") !=
        std::string::npos);
  CHECK(r.out.find("GPU7  SYS   SYS   SYS   NV1   NV2   NV1   NV2   X     1\n") !=
        std::string::npos);
  CHECK(r.out.find("(from NVML)") != std::string::npos);
}

TEST_CASE("time-slicing: replicas as <id>::<n>, a request on distinct GPUs, refused otherwise") {
  require_root();
  TopologyPlugin f("pcie4", Json{{"replicas", 2}});
  f.start();
  const Ids all = ids_of(f.kubelet->devices());
  REQUIRE(all.size() == 8);
  const auto& gpu0 = f.host.gpus()[0].uuid;
  const auto& gpu1 = f.host.gpus()[1].uuid;
  CHECK(all[0] == gpu0 + "::0");
  CHECK(all[1] == gpu0 + "::1");
  const Ids two = preferred(f, all, {}, 2);
  REQUIRE(two.size() == 2);
  CHECK(two[0].substr(0, two[0].find("::")) != two[1].substr(0, two[1].find("::")));
  v1beta1::AllocateResponse response;
  const auto refused = f.kubelet->allocate({gpu0 + "::0", gpu0 + "::1"}, response);
  CHECK(refused.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(refused.error_message().find("are replicas of one GPU (" + gpu0 + ")") !=
        std::string::npos);
  v1beta1::AllocateResponse ok;
  REQUIRE(f.kubelet->allocate({gpu1 + "::1", gpu0 + "::0"}, ok).ok());
  CHECK(ok.container_responses(0).envs().at("NVIDIA_VISIBLE_DEVICES") == gpu1 + "," + gpu0);
}

TEST_CASE("MIG mixed: a resource per profile beside whole GPUs, each registered") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "mixed"}});
  f.start();
  REQUIRE_MESSAGE(f.kubelet->wait_for_registrations(2, kTopologyWait), f.log());
  std::set<std::string> resources;
  for (const auto& r : f.kubelet->registrations()) resources.insert(r.resource_name());
  CHECK(resources == std::set<std::string>{"nvidia.com/gpu", kMig});
  CHECK(gcr::test::exists(f.kubelet_dir + "/gpu-device-plugin-nvidia.com-mig-1g.5gb.sock"));
  const Ids migs = ids_of(f.kubelet->devices(kMig));
  CHECK(migs == Ids{"MIG-5eed003b-0000-4000-8000-000000000000",
                    "MIG-5eed003b-0000-4000-8000-000000000001"});
  const Ids whole = ids_of(f.kubelet->devices());
  CHECK(whole.size() == 3);  // the MIG-enabled GPU is listed by its MIG devices only
  CHECK(std::find(whole.begin(), whole.end(), f.host.gpus()[1].uuid) == whole.end());
  v1beta1::AllocateResponse response;
  REQUIRE(f.kubelet->allocate({migs[1]}, response, kMig).ok());
  CHECK(response.container_responses(0).envs().at("NVIDIA_VISIBLE_DEVICES") == migs[1]);
}

TEST_CASE("MIG with cdi-annotations: the plugin's names are devices of the generated spec") {
  require_root();
  gcr::test::CdiFixture node;  // the runtime, with the spec generate wrote for this host
  for (const auto& naming : {std::pair<std::string, std::string>{"uuid", kMigUuid1},
                             std::pair<std::string, std::string>{"index", "1:1"}}) {
    const std::string& ids = naming.first;
    const std::string& mig = naming.second;
    CAPTURE(ids);
    PluginFixture f(
        Json{{"mig-strategy", "mixed"}, {"device-list", {"cdi-annotations"}}, {"device-ids", ids}});
    f.start();
    REQUIRE_MESSAGE(f.kubelet->wait_for_registrations(2, kTopologyWait), f.log());
    // One container asking for the MIG device and a whole GPU: the kubelet merges the two
    // resources' answers, keeping the first of two equal keys, so each has its own key.
    const std::string whole = ids_of(f.kubelet->devices()).front();
    v1beta1::AllocateResponse response;
    v1beta1::AllocateResponse gpu_response;
    REQUIRE(f.kubelet->allocate({mig}, response, kMig).ok());
    REQUIRE(f.kubelet->allocate({whole}, gpu_response).ok());
    Json annotations = Json::object();
    for (const auto* r : {&response, &gpu_response}) {
      for (const auto& [key, value] : r->container_responses(0).annotations()) {
        if (!annotations.contains(key)) annotations[key] = value;
      }
    }
    CHECK(annotations ==
          Json{{"cdi.k8s.io/gpu-device-plugin_nvidia.com_mig-1g.5gb", "nvidia.com/gpu=" + mig},
               {"cdi.k8s.io/gpu-device-plugin_nvidia.com_gpu", "nvidia.com/gpu=" + whole}});
    REQUIRE(node.create({}, {{"annotations", annotations}}).err == "");
    const auto devices = node.devices();
    CHECK(devices.count("/dev/nvidia0") == 1);
    CHECK(devices.count("/dev/nvidia-caps/nvidia-cap21") == 1);
    CHECK(devices.count("/dev/nvidia-caps/nvidia-cap22") == 1);
    CHECK(devices.count("/dev/nvidia-caps/nvidia-cap12") == 0);
    const auto gpu_nodes = std::count_if(devices.begin(), devices.end(), [](const auto& d) {
      return d.first.size() > 11 && d.first.rfind("/dev/nvidia", 0) == 0 &&
             std::isdigit(static_cast<unsigned char>(d.first[11]));
    });
    CHECK(gpu_nodes == 2);  // the MIG device's GPU and the whole one
  }
}

TEST_CASE("MIG single: every GPU's MIG devices as nvidia.com/gpu; a mixture is one line") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "single"}});
  // Every GPU an A100-SXM4-40GB in NVML's memory, so all devices are 1g.5gb.
  std::string description;
  for (const auto& gpu : f.host.gpus()) {
    const std::string bus = gpu.bus.substr(5, 2);
    description +=
        "memory " + bus + " 40960\nmig " + bus + " 1 0 1 4864\nmig " + bus + " 2 0 1 4864\n";
  }
  f.describe_nvml(description);
  f.start();
  REQUIRE(
      f.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 8; }, kTopologyWait));
  for (const auto& d : f.kubelet->devices()) CHECK(d.id().rfind("MIG-", 0) == 0);

  // The built-in layout: one GPU in MIG mode, the others not.
  PluginFixture mixture(Json{{"mig-strategy", "single"}});
  mixture.start();
  CHECK_MESSAGE(mixture.logged("mig-strategy single: GPU "), mixture.log());
  CHECK(mixture.logged("is not in MIG mode while GPU "));
  CHECK(mixture.logged("; use mixed: advertising no devices"));
  CHECK(mixture.logged("the kubelet is watching: sent 0 devices"));
  CHECK_FALSE(mixture.kubelet->wait_for_devices(any_device, 1500ms));
}

namespace {

// mig-strategy single on the simulated host with no GPU in MIG mode, serving: its 4 GPUs whole.
void serve_single_without_mig(PluginFixture& f) {
  f.describe_nvml("migmode 3b 0\n");
  f.start();
  REQUIRE_MESSAGE(
      f.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 4; }, kTopologyWait),
      f.log());
}

}  // namespace

// NVIDIA's plugin treats single on a node with no GPU in MIG mode as none; a cluster-wide
// single (the GPU Operator's default) must not leave such nodes with no GPU.
TEST_CASE("MIG single with no GPU in MIG mode: the whole GPUs; one in MIG mode but empty: none") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "single"}});
  serve_single_without_mig(f);
  for (const auto& d : f.kubelet->devices()) CHECK(d.id().rfind("GPU-", 0) == 0);

  // Every GPU in MIG mode, one of them with no instance made: single advertises nothing and
  // says which; mixed advertises the others' and says it too.
  std::string description;
  for (const auto& gpu : f.host.gpus()) {
    const std::string bus = gpu.bus.substr(5, 2);
    description += "memory " + bus + " 40960\nmigmode " + bus + " 1\n";
    if (bus != "3b") description += "mig " + bus + " 1 0 1 4864\n";
  }
  PluginFixture empty(Json{{"mig-strategy", "single"}});
  empty.describe_nvml(description);
  empty.start();
  CHECK(empty.logged("is in MIG mode with no MIG devices: advertising no devices"));
  CHECK(empty.logged("the kubelet is watching: sent 0 devices"));
  CHECK_FALSE(empty.kubelet->wait_for_devices(any_device, 1500ms));
  PluginFixture mixed(Json{{"mig-strategy", "mixed"}});
  mixed.describe_nvml(description);
  mixed.start();
  REQUIRE_MESSAGE(mixed.kubelet->wait_for_registrations(2, kTopologyWait), mixed.log());
  CHECK(mixed.logged("is in MIG mode with no MIG devices: none of it is advertised"));
  CHECK(mixed.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 3; },
                                        kTopologyWait, kMig));
  CHECK_FALSE(mixed.kubelet->wait_for_devices(any_device, 1500ms));

  // MIG mode turned off on that GPU, no MIG device made or removed (no capability file
  // changes): the plugin notices, and advertises it whole again.
  std::string off;
  for (const auto& gpu : f.host.gpus()) {
    const std::string bus = gpu.bus.substr(5, 2);
    off += "memory " + bus + " 40960\nmigmode " + bus + (bus == "3b" ? " 0\n" : " 1\n");
    if (bus != "3b") off += "mig " + bus + " 1 0 1 4864\n";
  }
  mixed.describe_nvml(off);
  CHECK_MESSAGE(mixed.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 1; },
                                                kTopologyWait),
                mixed.log());
}

// A GPU NVML loses (fallen off the bus, being reset) keeps the MIG layout last read: with
// single on a node without MIG, the other GPUs stay advertised (the lost one's health says the
// rest), where taking its mode for unknown withdrew every GPU of the node.
TEST_CASE("MIG single on a node without MIG: a GPU NVML loses leaves the others advertised") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "single"}});
  serve_single_without_mig(f);
  f.send_nvml_event("lost 3b");
  CHECK_MESSAGE(f.logged("NVML does not say its MIG mode now; its MIG layout as last read"),
                f.log());
  CHECK_FALSE(f.kubelet->wait_for_devices([](const Devices& d) { return d.size() != 4; }, 2000ms));
  f.send_nvml_event("back 3b");
}

// Profile names as NVIDIA's plugin gives them, from the GPU's memory as well as the device's:
// on a GPU of 143771 MiB (an H200's), a device of 16640 MiB is 1g.18gb, not 1g.17gb.
TEST_CASE("MIG mixed on a GPU with an H200's memory: NVIDIA's profile names") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "mixed"}});
  f.describe_nvml("memory 3b 143771\nmig 3b 1 0 1 16640\nmig 3b 2 0 3 69120\n");
  f.start();
  REQUIRE_MESSAGE(f.kubelet->wait_for_registrations(3, kTopologyWait), f.log());
  CHECK(f.kubelet->devices("nvidia.com/mig-1g.18gb").size() == 1);
  CHECK(f.kubelet->devices("nvidia.com/mig-3g.71gb").size() == 1);
  CHECK(f.kubelet->devices("nvidia.com/mig-1g.17gb").empty());
}

// A GPU instance of a media-extension profile (NVML_GPU_INSTANCE_PROFILE_1_SLICE_REV1, found by
// its profile ID) is NVIDIA's 1g.5gb+me: the resource nvidia.com/mig-1g.5gb.me.
TEST_CASE("MIG mixed: a media-extension profile is its own resource, as NVIDIA names it") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "mixed"}});
  f.describe_nvml("mig 3b 1 0 1 4864\nmig 3b 2 0 1 4864\ngiprofile 3b 2 7\n");
  f.start();
  REQUIRE_MESSAGE(f.kubelet->wait_for_registrations(3, kTopologyWait), f.log());
  CHECK(f.kubelet->devices(kMig).size() == 1);
  CHECK(f.kubelet->devices("nvidia.com/mig-1g.5gb.me").size() == 1);
}

// NVIDIA's plugin offers under mixed only MIG devices whose compute instance is their whole GPU
// instance; a 1c.3g.20gb device is skipped with a line.
TEST_CASE("MIG mixed: a compute instance smaller than its GPU instance is not advertised") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "mixed"}});
  f.describe_nvml("mig 3b 1 0 3 20096\nmig 3b 2 0 3 20096\ncislices 3b 2 1\n");
  f.start();
  REQUIRE_MESSAGE(f.kubelet->wait_for_registrations(2, kTopologyWait), f.log());
  CHECK(f.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 1; }, kTopologyWait,
                                    "nvidia.com/mig-3g.20gb"));
  CHECK(f.kubelet->devices("nvidia.com/mig-1c.3g.20gb").empty());
  CHECK_MESSAGE(f.logged("(1c.3g.20gb) is not advertised: its compute instance is smaller than "
                         "its GPU instance, which mig-strategy mixed does not offer"),
                f.log());
  for (const auto& registration : f.kubelet->registrations())
    CHECK(registration.resource_name() != "nvidia.com/mig-1c.3g.20gb");
}

TEST_CASE("MIG through Allocate and then the shim: the container gets exactly that MIG device") {
  require_root();
  REQUIRE_MESSAGE(gcr::test::exists("/usr/bin/containerd"), "containerd is not installed");
  gcr::test::GpuFixture runtime(gcr::test::SimHostOptions{},
                                Json{{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
  PluginFixture f(Json{{"mig-strategy", "mixed"}});
  Json config = Json::parse(gcr::test::read_file(f.dir / "config.json"));
  config["driver"] = runtime.host().driver_config()["driver"];
  gcr::test::write_file(f.dir / "config.json", config.dump(2));
  f.start();
  REQUIRE(f.kubelet->wait_for_registrations(2, kTopologyWait));
  const Ids migs = ids_of(f.kubelet->devices(kMig));
  REQUIRE(migs.size() == 2);
  v1beta1::AllocateResponse response;
  REQUIRE(f.kubelet->allocate({migs[0]}, response, kMig).ok());
  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = runtime.config_path();
  const gcr::test::Containerd containerd(runtime.path("containerd"), env);
  gcr::test::make_busybox_rootfs(runtime.path("ctr"));
  const auto r = containerd.ctr(
      {"run", "--rm", "--runc-binary", gcr::test::built("gpu-container-runtime"), "--env",
       "NVIDIA_VISIBLE_DEVICES=" +
           response.container_responses(0).envs().at("NVIDIA_VISIBLE_DEVICES"),
       "--env", "NVIDIA_DRIVER_CAPABILITIES=utility", "--rootfs", runtime.path("ctr/rootfs"),
       "gcr-mig-test", "/bin/sh", "-c", "cd /dev && ls -d nvidia* nvidia-caps/* | tr '\\n' ' '"});
  CHECK(r.err == "");
  // The parent GPU's node (bus 3b has minor 0) and the first instance's access capabilities.
  CHECK(r.out ==
        "nvidia-caps nvidia-caps/nvidia-cap12 nvidia-caps/nvidia-cap13 nvidia0 nvidiactl ");
}

TEST_CASE("Xid events: a critical one takes the GPU until it is reset; ignored ones do not") {
  require_root();
  PluginFixture f(Json{{"ignored-xids", {94}}});
  f.describe_nvml("");
  f.start();
  REQUIRE_MESSAGE(f.logged("NVML loaded from"), f.log());
  const auto& gpu = f.host.gpus()[2];
  const std::string bus = gpu.bus.substr(5, 2);
  f.send_nvml_event("xid " + bus + " 13");
  f.send_nvml_event("xid " + bus + " 94");
  CHECK(f.logged("Xid 13 on " + gpu.bus + " ignored: an application's error"));
  CHECK(f.logged("Xid 94 on " + gpu.bus + " ignored"));
  CHECK(health_of(f.kubelet->devices(), gpu.uuid) == "Healthy");
  f.send_nvml_event("xid " + bus + " 79");
  REQUIRE_MESSAGE(
      f.kubelet->wait_for_devices(
          [&](const Devices& d) { return health_of(d, gpu.uuid) == "Unhealthy"; }, kTopologyWait),
      f.log());
  CHECK(f.logged("GPU " + gpu.uuid + " is Unhealthy: critical Xid 79 (until the GPU is reset)"));
  for (std::size_t i = 0; i < f.host.gpus().size(); ++i) {
    if (i != 2) CHECK(health_of(f.kubelet->devices(), f.host.gpus()[i].uuid) == "Healthy");
  }
  // A reset: NVML loses the GPU, then sees it again.
  f.send_nvml_event("lost " + bus);
  std::this_thread::sleep_for(1500ms);
  CHECK(health_of(f.kubelet->devices(), gpu.uuid) == "Unhealthy");
  f.send_nvml_event("back " + bus);
  REQUIRE(f.kubelet->wait_for_devices(
      [&](const Devices& d) { return health_of(d, gpu.uuid) == "Healthy"; }, kTopologyWait));
  CHECK(f.logged("GPU " + gpu.uuid + " was reset: Healthy again"));
  // The reset dropped the GPU's event registration: its next Xid is seen all the same.
  f.send_nvml_event("xid " + bus + " 79");
  CHECK_MESSAGE(
      f.kubelet->wait_for_devices(
          [&](const Devices& d) { return health_of(d, gpu.uuid) == "Unhealthy"; }, kTopologyWait),
      f.log());
}

// Some boards answer NOT_SUPPORTED when their events are asked for: the others are still
// watched (one such GPU had switched Xid watching off for every GPU).
TEST_CASE("Xid events: a GPU whose events cannot be watched is named; the others are watched") {
  require_root();
  PluginFixture f;
  const auto& quiet = f.host.gpus()[0];
  const auto& gpu = f.host.gpus()[2];
  f.describe_nvml("noevents " + quiet.bus.substr(5, 2) + "\n");
  f.start();
  REQUIRE_MESSAGE(f.logged("NVML loaded from"), f.log());
  CHECK(f.logged("no Xid events from " + quiet.bus + " (NVML error 3): its health from its " +
                 "device node and /proc alone"));
  f.send_nvml_event("xid " + gpu.bus.substr(5, 2) + " 79");
  CHECK_MESSAGE(
      f.kubelet->wait_for_devices(
          [&](const Devices& d) { return health_of(d, gpu.uuid) == "Unhealthy"; }, kTopologyWait),
      f.log());
  CHECK(health_of(f.kubelet->devices(), quiet.uuid) == "Healthy");
}

// NVIDIA's plugin marks every device Unhealthy when NVML's event wait fails (a lost GPU may say
// no more than that); here they are Healthy again once the wait answers.
TEST_CASE("Xid events: a failing wait takes every GPU until the wait answers again") {
  require_root();
  PluginFixture f;
  f.describe_nvml("");
  f.start();
  REQUIRE_MESSAGE(f.logged("NVML loaded from"), f.log());
  const auto all_are = [](const std::string& health) {
    return [health](const Devices& d) {
      return !d.empty() && std::all_of(d.begin(), d.end(), [&](const auto& device) {
        return device.health() == health;
      });
    };
  };
  REQUIRE_MESSAGE(f.kubelet->wait_for_devices(all_are("Healthy"), kTopologyWait), f.log());
  f.send_nvml_event("waitfail 15");
  REQUIRE_MESSAGE(f.kubelet->wait_for_devices(all_are("Unhealthy"), kTopologyWait), f.log());
  CHECK(f.logged("waiting for Xid events failed: "));
  CHECK(f.logged("every GPU is Unhealthy until the wait answers again"));
  f.send_nvml_event("waitok");
  REQUIRE_MESSAGE(f.kubelet->wait_for_devices(all_are("Healthy"), kTopologyWait), f.log());
  CHECK(f.logged("waiting for Xid events works again"));
  // A wait failing over a GPU's reset: the new watch of the reset starts afresh, and says
  // whether its waits fail (the old one's failure stayed for good).
  const auto& gpu = f.host.gpus()[2];
  const std::string bus = gpu.bus.substr(5, 2);
  f.send_nvml_event("xid " + bus + " 79");
  REQUIRE_MESSAGE(
      f.kubelet->wait_for_devices(
          [&](const Devices& d) { return health_of(d, gpu.uuid) == "Unhealthy"; }, kTopologyWait),
      f.log());
  f.send_nvml_event("waitfail 15");
  REQUIRE_MESSAGE(f.kubelet->wait_for_devices(all_are("Unhealthy"), kTopologyWait), f.log());
  f.send_nvml_event("lost " + bus);
  std::this_thread::sleep_for(4s);  // the failing wait reads the line after its backoff
  f.send_nvml_event("back " + bus);
  f.send_nvml_event("waitok");
  REQUIRE_MESSAGE(f.kubelet->wait_for_devices(all_are("Healthy"), kTopologyWait), f.log());
  CHECK(f.logged("GPU " + gpu.uuid + " was reset: Healthy again"));
}

TEST_CASE("Xid on a MIG instance takes that MIG device only; on the GPU, every device on it") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "mixed"}, {"replicas", 2}});
  f.describe_nvml("");
  f.start();
  REQUIRE(f.kubelet->wait_for_registrations(2, kTopologyWait));
  const std::string mig0 = "MIG-5eed003b-0000-4000-8000-000000000000";
  const std::string mig1 = "MIG-5eed003b-0000-4000-8000-000000000001";
  f.send_nvml_event("xid 3b 79 2 0");  // GPU instance 2, compute instance 0: the second device
  REQUIRE(f.kubelet->wait_for_devices(
      [&](const Devices& d) { return health_of(d, mig1 + "::0") == "Unhealthy"; }, kTopologyWait,
      kMig));
  CHECK(health_of(f.kubelet->devices(kMig), mig1 + "::1") == "Unhealthy");
  CHECK(health_of(f.kubelet->devices(kMig), mig0 + "::0") == "Healthy");
  f.send_nvml_event("xid 3b 79 1 0");  // the first device too: both stay Unhealthy
  REQUIRE(f.kubelet->wait_for_devices(
      [&](const Devices& d) { return health_of(d, mig0 + "::0") == "Unhealthy"; }, kTopologyWait,
      kMig));
  CHECK(health_of(f.kubelet->devices(kMig), mig1 + "::0") == "Unhealthy");
  const auto& whole = f.host.gpus()[0];  // bus 06
  f.send_nvml_event("xid 06 48");
  REQUIRE(f.kubelet->wait_for_devices(
      [&](const Devices& d) {
        return health_of(d, whole.uuid + "::0") == "Unhealthy" &&
               health_of(d, whole.uuid + "::1") == "Unhealthy";
      },
      kTopologyWait));
}

TEST_CASE("a MIG layout that changes is listed again") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "mixed"}});
  f.describe_nvml("mig 3b 1 0 1 4864\nmig 3b 2 0 1 4864\n");
  f.start();
  REQUIRE(f.kubelet->wait_for_registrations(2, kTopologyWait));
  CHECK(f.kubelet->devices(kMig).size() == 2);
  // A third instance: the driver lists it, NVML knows it.
  const std::string caps = f.host.dev_root() + "/proc/driver/nvidia/capabilities/gpu0/mig/gi3";
  gcr::test::write_file(caps + "/access", "DeviceFileMinor: 30\nDeviceFileMode: 292\n");
  gcr::test::write_file(caps + "/ci0/access", "DeviceFileMinor: 31\nDeviceFileMode: 292\n");
  f.describe_nvml("mig 3b 1 0 1 4864\nmig 3b 2 0 1 4864\nmig 3b 3 0 1 4864\n");
  REQUIRE_MESSAGE(f.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 3; },
                                              kTopologyWait, kMig),
                  f.log());
  CHECK(f.logged("the MIG layout changed"));
  // Repartitioned into one larger instance: its profile is a resource of its own, and the 1g
  // profile, of which none is left, lists no device (it listed the gone ones, Healthy, and
  // Allocate handed them out).
  const std::string mig = f.host.dev_root() + "/proc/driver/nvidia/capabilities/gpu0/mig/";
  boost::filesystem::remove_all(mig + "gi2");
  boost::filesystem::remove_all(mig + "gi3");
  f.describe_nvml("mig 3b 1 0 3 19968\n");
  REQUIRE_MESSAGE(f.kubelet->wait_for_registrations(3, kTopologyWait), f.log());
  REQUIRE_MESSAGE(
      f.kubelet->wait_for_devices([](const Devices& d) { return d.empty(); }, kTopologyWait, kMig),
      f.log());
  v1beta1::AllocateResponse response;
  CHECK_FALSE(
      f.kubelet->allocate({"MIG-5eed003b-0000-4000-8000-000000000000"}, response, kMig).ok());
}
