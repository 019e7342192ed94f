// gpu-device-plugin against the fake kubelet (the real v1beta1 gRPC protocol) on the simulated
// GPU host: registration, the device list with NUMA, Allocate per strategy, refusals, kubelet
// restarts, health loss and recovery, SIGTERM, a driver that appears late; and end to end,
// Allocate's answer given to containerd with the shim as runtime and real runc. Needs root.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <thread>

#include "cdi_fixture.h"
#include "containerd.h"
#include "fake_kubelet.h"
#include "gpu_fixture.h"
#include "plugin_fixture.h"
#include "sim_host.h"

using gcr::Json;
using gcr::test::Devices;
using gcr::test::FakeKubelet;
using gcr::test::health_of;
using gcr::test::ids_of;
using gcr::test::PluginFixture;
using namespace std::chrono_literals;

namespace {

using gcr::test::require_root;

constexpr auto kWait = 10s;
const std::string kSocket = gcr::test::kPluginSocket;

}  // namespace

TEST_CASE("registration: v1beta1, our socket's name, the resource, the same options twice") {
  require_root();
  PluginFixture f;
  f.start();
  const auto registration = f.kubelet->registrations().at(0);
  CHECK(registration.version() == "v1beta1");
  CHECK(registration.endpoint() == kSocket);
  CHECK(registration.resource_name() == "nvidia.com/gpu");
  CHECK(registration.options().get_preferred_allocation_available());
  CHECK_FALSE(registration.options().pre_start_required());
  CHECK(f.kubelet->options().get_preferred_allocation_available());
  struct stat st {};
  REQUIRE(::stat((f.kubelet_dir + "/" + kSocket).c_str(), &st) == 0);
  CHECK(S_ISSOCK(st.st_mode));
  CHECK(f.logged("registered with the kubelet as nvidia.com/gpu (4 devices)"));
  CHECK(f.logged("configuration " + f.dir / "config.json"));
}

TEST_CASE("ListAndWatch: every GPU by UUID, Healthy, with its NUMA node; or by index") {
  require_root();
  PluginFixture f;
  f.start();
  const Devices devices = f.kubelet->devices();
  REQUIRE(devices.size() == 4);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const auto& gpu = f.host.gpus()[i];
    CHECK(devices[i].id() == gpu.uuid);
    CHECK(devices[i].health() == "Healthy");
    REQUIRE(devices[i].topology().nodes_size() == 1);
    CHECK(devices[i].topology().nodes(0).id() == gpu.numa);
  }
  PluginFixture by_index(Json{{"device-ids", "index"}});
  gcr::test::write_file(by_index.host.dev_root() + "/sys/bus/pci/devices/" +
                            by_index.host.gpus()[3].bus + "/numa_node",
                        "-1\n");
  by_index.start();
  const Devices indexed = by_index.kubelet->devices();
  CHECK(ids_of(indexed) == std::vector<std::string>{"0", "1", "2", "3"});
  CHECK(indexed[3].topology().nodes_size() == 0);  // no NUMA information: no topology
}

TEST_CASE("Allocate: envvar, volume-mounts, cdi-annotations and cdi-cri, as the shim reads them") {
  require_root();
  PluginFixture f(Json{{"device-list", {"envvar", "cdi-annotations", "cdi-cri"}}});
  f.start();
  const std::string gpu1 = f.host.gpus()[1].uuid;
  const std::string gpu3 = f.host.gpus()[3].uuid;
  v1beta1::AllocateResponse response;
  REQUIRE(f.kubelet->allocate({gpu3, gpu1}, response).ok());
  REQUIRE(response.container_responses_size() == 1);
  const auto& answer = response.container_responses(0);
  CHECK(answer.envs().at("NVIDIA_VISIBLE_DEVICES") == gpu3 + "," + gpu1);
  CHECK(answer.annotations().at("cdi.k8s.io/gpu-device-plugin_nvidia.com_gpu") ==
        "nvidia.com/gpu=" + gpu3 + ",nvidia.com/gpu=" + gpu1);
  REQUIRE(answer.cdi_devices_size() == 2);
  CHECK(answer.cdi_devices(0).name() == "nvidia.com/gpu=" + gpu3);
  CHECK(answer.mounts_size() == 0);

  PluginFixture mounts(Json{{"device-list", {"volume-mounts"}}, {"device-ids", "index"}});
  mounts.start();
  v1beta1::AllocateResponse marked;
  REQUIRE(mounts.kubelet->allocate({"2"}, marked).ok());
  const auto& m = marked.container_responses(0);
  CHECK(m.envs().at("NVIDIA_VISIBLE_DEVICES") == "/var/run/nvidia-container-devices");
  REQUIRE(m.mounts_size() == 1);
  CHECK(m.mounts(0).host_path() == "/dev/null");
  CHECK(m.mounts(0).container_path() == "/var/run/nvidia-container-devices/2");
  CHECK(m.annotations().empty());
  CHECK(m.cdi_devices_size() == 0);
}

TEST_CASE("imex-channel: channel 0 with the GPUs while the node has it; enabled refuses else") {
  require_root();
  PluginFixture f(Json{{"imex-channel", "auto"}});
  f.start();
  const std::string gpu = f.host.gpus()[1].uuid;
  const std::string channel = f.host.dev_root() + "/dev/nvidia-caps-imex-channels/channel0";
  CHECK(
      f.logged("containers given GPUs get IMEX channel 0 "
               "(/dev/nvidia-caps-imex-channels/channel0)"));
  v1beta1::AllocateResponse response;
  REQUIRE(f.kubelet->allocate({gpu}, response).ok());
  CHECK(response.container_responses(0).envs().at("NVIDIA_IMEX_CHANNELS") == "0");
  CHECK(f.logged("allocated " + gpu + " and IMEX channel 0"));
  // auto: a node without the channel gives none, said once; it comes back when the node does.
  REQUIRE(::rename(channel.c_str(), (channel + ".away").c_str()) == 0);
  CHECK(
      f.logged("IMEX channel 0 is not on this node, so containers given GPUs get none until "
               "it is: no character device (" +
               channel + ")"));
  v1beta1::AllocateResponse without;
  REQUIRE(f.kubelet->allocate({gpu}, without).ok());
  CHECK(without.container_responses(0).envs().count("NVIDIA_IMEX_CHANNELS") == 0);
  REQUIRE(::rename((channel + ".away").c_str(), channel.c_str()) == 0);
  v1beta1::AllocateResponse again;
  REQUIRE(f.kubelet->allocate({gpu}, again).ok());
  CHECK(again.container_responses(0).envs().at("NVIDIA_IMEX_CHANNELS") == "0");
  const auto said = [&](const std::string& line) {
    const std::string log = f.log();
    std::size_t n = 0;
    for (auto at = log.find(line); at != std::string::npos; at = log.find(line, at + 1)) ++n;
    return n;
  };
  const std::string given = "containers given GPUs get IMEX channel 0";
  for (int i = 0; i < 50 && said(given) < 2; ++i) std::this_thread::sleep_for(100ms);
  CHECK(said(given) == 2);  // at start, and when it is back
  CHECK(said("IMEX channel 0 is not on this node") == 1);

  PluginFixture enabled(Json{{"imex-channel", "enabled"}, {"device-list", {"volume-mounts"}}});
  const std::string other = enabled.host.dev_root() + "/dev/nvidia-caps-imex-channels/channel0";
  REQUIRE(::rename(other.c_str(), (other + ".away").c_str()) == 0);
  enabled.start();
  CHECK(
      enabled.logged("IMEX channel 0 is not on this node, so containers given GPUs are refused "
                     "until it is (imex-channel = enabled): no character device (" +
                     other + ")"));
  const auto refused = enabled.kubelet->allocate({enabled.host.gpus()[0].uuid}, response);
  CHECK(refused.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(refused.error_message() ==
        "IMEX channel 0, which [device-plugin] imex-channel = enabled gives every container with "
        "GPUs, is not on this node: no character device (" +
            other + ")");
  REQUIRE(::rename((other + ".away").c_str(), other.c_str()) == 0);
  v1beta1::AllocateResponse marked;
  REQUIRE(enabled.kubelet->allocate({enabled.host.gpus()[0].uuid}, marked).ok());
  const auto& mounts = marked.container_responses(0).mounts();
  REQUIRE(mounts.size() == 2);
  CHECK(mounts[1].container_path() == "/var/run/nvidia-container-devices/imex/0");
  CHECK(mounts[1].host_path() == "/dev/null");
}

TEST_CASE("Allocate: an unknown or unhealthy ID is INVALID_ARGUMENT naming it") {
  require_root();
  PluginFixture f;
  f.start();
  v1beta1::AllocateResponse response;
  auto status = f.kubelet->allocate({f.host.gpus()[0].uuid, "GPU-nope"}, response);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(status.error_message() == "unknown device `GPU-nope`");
  const auto& gpu = f.host.gpus()[2];
  const std::string node = f.host.dev_root() + "/dev/nvidia" + std::to_string(gpu.minor);
  REQUIRE(::rename(node.c_str(), (node + ".away").c_str()) == 0);
  REQUIRE(f.kubelet->wait_for_devices(
      [&](const Devices& d) { return health_of(d, gpu.uuid) == "Unhealthy"; }, kWait));
  status = f.kubelet->allocate({gpu.uuid}, response);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(status.error_message() ==
        "device `" + gpu.uuid + "` is unhealthy: its device node is gone (" + node + ")");
}

TEST_CASE("health: a vanished device node or /proc entry is Unhealthy, and Healthy when back") {
  require_root();
  PluginFixture f;
  f.start();
  const auto& gpu = f.host.gpus()[1];
  const std::string node = f.host.dev_root() + "/dev/nvidia" + std::to_string(gpu.minor);
  REQUIRE(::rename(node.c_str(), (node + ".away").c_str()) == 0);
  REQUIRE_MESSAGE(
      f.kubelet->wait_for_devices(
          [&](const Devices& d) { return health_of(d, gpu.uuid) == "Unhealthy"; }, kWait),
      f.log());
  CHECK(f.kubelet->devices().size() == 4);
  CHECK(health_of(f.kubelet->devices(), f.host.gpus()[0].uuid) == "Healthy");
  REQUIRE(::rename((node + ".away").c_str(), node.c_str()) == 0);
  REQUIRE(f.kubelet->wait_for_devices(
      [&](const Devices& d) { return health_of(d, gpu.uuid) == "Healthy"; }, kWait));
  CHECK(f.logged("GPU " + gpu.uuid + " is Unhealthy: its device node is gone"));
  CHECK(f.logged("GPU " + gpu.uuid + " is Healthy again"));

  // Fallen off the bus: the driver no longer lists it.
  const std::string proc = f.host.dev_root() + "/proc/driver/nvidia/gpus/" + gpu.bus;
  REQUIRE(::rename(proc.c_str(), (proc + ".away").c_str()) == 0);
  REQUIRE(f.kubelet->wait_for_devices(
      [&](const Devices& d) { return d.size() == 4 && health_of(d, gpu.uuid) == "Unhealthy"; },
      kWait));
  REQUIRE(::rename((proc + ".away").c_str(), proc.c_str()) == 0);
  CHECK(f.kubelet->wait_for_devices(
      [&](const Devices& d) { return health_of(d, gpu.uuid) == "Healthy"; }, kWait));
}

TEST_CASE("GetPreferredAllocation: must_include first, then its NUMA node, only from available") {
  require_root();
  PluginFixture f(Json{{"device-ids", "index"}});
  f.start();
  // GPUs 0 and 1 are on node 0, GPUs 2 and 3 on node 1.
  v1beta1::PreferredAllocationResponse response;
  REQUIRE(f.kubelet->preferred({"0", "1", "2", "3"}, {"2"}, 2, response).ok());
  const auto& chosen = response.container_responses(0).deviceids();
  CHECK(std::vector<std::string>(chosen.begin(), chosen.end()) ==
        std::vector<std::string>{"2", "3"});
  v1beta1::PreferredAllocationResponse spread;
  REQUIRE(f.kubelet->preferred({"0", "2", "3"}, {}, 2, spread).ok());
  const auto& two = spread.container_responses(0).deviceids();
  CHECK(std::vector<std::string>(two.begin(), two.end()) == std::vector<std::string>{"2", "3"});
  v1beta1::PreferredAllocationResponse impossible;
  REQUIRE(f.kubelet->preferred({"0", "1"}, {"3"}, 2, impossible).ok());
  CHECK(impossible.container_responses(0).deviceids_size() == 0);
}

TEST_CASE(
    "a kubelet restart (every socket removed, a new kubelet.sock) is noticed: registered again") {
  require_root();
  PluginFixture f;
  f.start();
  for (std::size_t restarts = 1; restarts <= 2; ++restarts) {
    f.kubelet->restart();
    REQUIRE_MESSAGE(f.kubelet->wait_for_registrations(restarts + 1, kWait), f.log());
    CHECK(f.kubelet->devices().size() == 4);
  }
  // gRPC may unlink the old listener's path after the new one is bound there; the plugin sees
  // that removal and serves the socket again, so it is there again within a tick.
  CHECK(gcr::test::wait_for_path(f.kubelet_dir + "/" + kSocket, 10));
  CHECK(f.logged("was removed: serving it again"));
}

// ext4 and xfs hand a freed inode number out again: the new kubelet.sock of a restart can have
// the last one's number. Here it is the same inode, linked back after the restart's removals
// were seen (in the plugin's own read: our socket served again, no kubelet.sock yet).
TEST_CASE("a kubelet restart whose new kubelet.sock has the old inode number: registered again") {
  require_root();
  PluginFixture f;
  f.start();
  REQUIRE(f.kubelet->wait_for_registrations(1, kWait));
  const std::string kubelet = f.kubelet_dir + "/kubelet.sock";
  const std::string kept = f.dir / "kubelet.sock.inode";
  REQUIRE(::link(kubelet.c_str(), kept.c_str()) == 0);
  REQUIRE(::unlink(kubelet.c_str()) == 0);
  REQUIRE(::unlink((f.kubelet_dir + "/" + kSocket).c_str()) == 0);
  REQUIRE(gcr::test::wait_for_path(f.kubelet_dir + "/" + kSocket, 10));
  CHECK(f.logged("waiting for the kubelet"));
  REQUIRE(::link(kept.c_str(), kubelet.c_str()) == 0);
  CHECK_MESSAGE(f.kubelet->wait_for_registrations(2, kWait), f.log());
  CHECK(f.logged("the kubelet restarted"));
}

// The directory removed and a file at its name for a while: it cannot be watched again at once.
// It is tried every tick, so once it can be, a kubelet restart is noticed again.
TEST_CASE("a kubelet directory that cannot be watched for a while is watched again later") {
  require_root();
  PluginFixture f;
  f.start();
  REQUIRE(f.kubelet->wait_for_registrations(1, kWait));
  f.kubelet->stop();
  // A file takes the directory's name in one step, then the directory goes.
  const std::string swap = f.dir / "swap";
  gcr::test::write_file(swap, "not a directory");
  REQUIRE(::renameat2(AT_FDCWD, swap.c_str(), AT_FDCWD, f.kubelet_dir.c_str(), RENAME_EXCHANGE) ==
          0);
  std::filesystem::remove_all(swap);
  CHECK(f.logged("(tried again every tick)"));
  // The kubelet starts in it before the plugin watches it again: seen once it does.
  std::filesystem::remove(f.kubelet_dir);
  std::filesystem::create_directories(f.kubelet_dir);
  f.kubelet->start();
  CHECK_MESSAGE(f.logged("watching " + f.kubelet_dir + " again"), f.log());
  REQUIRE_MESSAGE(f.kubelet->wait_for_registrations(2, kWait), f.log());
  f.kubelet->restart();
  CHECK_MESSAGE(f.kubelet->wait_for_registrations(3, kWait), f.log());
}

// A kubelet whose socket takes connections and never answers holds Register to its 15 s deadline
// (a kubelet that cannot dial the plugin back, or is stuck). The call runs on its own thread:
// health keeps reaching the kubelet that holds the stream, a kubelet restart is registered with
// at once, and SIGTERM does not wait for the call.
TEST_CASE("a kubelet that never answers Register holds up neither health, a restart nor SIGTERM") {
  require_root();
  PluginFixture f;
  f.start();
  REQUIRE(f.kubelet->wait_for_registrations(1, kWait));
  const std::string kubelet = f.kubelet_dir + "/kubelet.sock";
  const auto restarts_logged = [&] {
    const std::string log = f.log();
    std::size_t count = 0;
    for (auto at = log.find("the kubelet restarted"); at != std::string::npos;
         at = log.find("the kubelet restarted", at + 1))
      ++count;
    return count;
  };
  // A hung kubelet's socket put at kubelet.sock, once the plugin is registering with it.
  const auto hang_kubelet = [&](const std::string& name) {
    const std::size_t restarts = restarts_logged() + 1;
    auto hung = std::make_unique<gcr::test::ListeningSocket>(f.dir / name);
    REQUIRE(::rename((f.dir / name).c_str(), kubelet.c_str()) == 0);
    for (int i = 0; i < 50 && restarts_logged() < restarts; ++i) std::this_thread::sleep_for(100ms);
    REQUIRE_MESSAGE(restarts_logged() == restarts, f.log());
    return hung;
  };

  auto hung = hang_kubelet("hung.sock");
  const auto& gpu = f.host.gpus()[1];
  const std::string node = f.host.dev_root() + "/dev/nvidia" + std::to_string(gpu.minor);
  REQUIRE(::rename(node.c_str(), (node + ".away").c_str()) == 0);
  CHECK_MESSAGE(f.kubelet->wait_for_devices(
                    [&](const Devices& d) { return health_of(d, gpu.uuid) == "Unhealthy"; }, 4s),
                f.log());

  f.kubelet->restart();
  CHECK_MESSAGE(f.kubelet->wait_for_registrations(2, 4s), f.log());
  CHECK(f.log().find("registration refused or failed") == std::string::npos);

  hung = hang_kubelet("hung-again.sock");
  const auto asked = std::chrono::steady_clock::now();
  CHECK(f.plugin->stop() == 0);
  CHECK(std::chrono::steady_clock::now() - asked < 5s);
}

TEST_CASE("the kubelet's own socket moved away and back is no restart: registered once") {
  require_root();
  PluginFixture f;
  f.start();
  REQUIRE(f.kubelet->wait_for_registrations(1, kWait));
  // The creation event of the socket the plugin registered through, as a plugin starting with
  // the kubelet sees it queued before its first registration (seen on a real GPU host).
  const std::string socket = f.kubelet_dir + "/kubelet.sock";
  REQUIRE(::rename(socket.c_str(), (socket + ".moved").c_str()) == 0);
  REQUIRE(::rename((socket + ".moved").c_str(), socket.c_str()) == 0);
  std::this_thread::sleep_for(1500ms);
  CHECK(f.kubelet->registrations().size() == 1);
  CHECK(f.log().find("the kubelet restarted") == std::string::npos);
}

TEST_CASE("killed with SIGKILL and started again, 20 times: it settles every time") {
  require_root();
  PluginFixture f;
  f.start();
  for (int round = 1; round <= 20; ++round) {
    CAPTURE(round);
    f.plugin->kill();  // its socket stays behind, as after an OOM kill
    const std::size_t before = f.kubelet->registrations().size();
    f.start_plugin();
    REQUIRE_MESSAGE(f.kubelet->wait_for_registrations(before + 1, kWait), f.log());
    const auto registered = std::chrono::steady_clock::now();
    const std::string gpu = f.host.gpus().at(0).uuid;
    v1beta1::AllocateResponse response;
    grpc::Status allocated = f.kubelet->allocate({gpu}, response);
    while (!allocated.ok() && std::chrono::steady_clock::now() - registered < 1s) {
      std::this_thread::sleep_for(20ms);
      allocated = f.kubelet->allocate({gpu}, response);
    }
    CHECK_MESSAGE(allocated.ok(), allocated.error_message());
    // A plugin that took its own removal of the stale socket for a kubelet's would serve and
    // register again, and again: one registration per start, and the log says no removal.
    std::this_thread::sleep_for(1s);
    CHECK(f.kubelet->registrations().size() == before + 1);
    CHECK(f.log().find("was removed: serving it again") == std::string::npos);  // this start's
  }
}

TEST_CASE("a kubelet that is not there yet is waited for without a tight loop") {
  require_root();
  PluginFixture f;
  f.start_plugin();
  REQUIRE(gcr::test::wait_for_path(f.kubelet_dir + "/" + kSocket, 10));
  CHECK(f.logged("waiting for the kubelet"));
  // Waiting costs the ticks' work, not a core: a loop that polled again at once would use about
  // 3 s of CPU over these 3 s, ten times the bound.
  const double before = gcr::test::cpu_seconds(f.plugin->pid());
  std::this_thread::sleep_for(3s);
  const double used = gcr::test::cpu_seconds(f.plugin->pid()) - before;
  CHECK_MESSAGE(used < 0.3, "the plugin used " << used << " s of CPU in 3 s of waiting");
  // Said once, however long the wait.
  const std::string log = f.log();
  CHECK(log.find("waiting for the kubelet") == log.rfind("waiting for the kubelet"));
  f.start_kubelet();
  CHECK_MESSAGE(f.kubelet->wait_for_registrations(1, kWait), f.log());
}

TEST_CASE("SIGTERM: the socket is removed and the plugin exits 0") {
  require_root();
  PluginFixture f;
  f.start();
  CHECK(f.plugin->stop() == 0);
  CHECK_FALSE(gcr::test::exists(f.kubelet_dir + "/" + kSocket));
  CHECK(f.logged("stopping on SIGTERM"));
}

// A node without nvidia-persistenced: the driver gives a GPU's UUID once something initialises
// it. Until then it is not advertised, where the placeholder all such GPUs share would be one
// device for ever.
TEST_CASE("a GPU the driver gives no UUID for yet is advertised once it does") {
  require_root();
  PluginFixture f;
  for (std::size_t i = 0; i < 4; ++i) f.host.set_initialised(i, false);
  f.start();
  // No GPU to advertise yet, but NVML is loaded: on a real node that initialises them.
  CHECK_MESSAGE(f.logged("NVML loaded from"), f.log());
  f.host.set_initialised(0, true);
  f.host.set_initialised(2, true);
  CHECK_MESSAGE(f.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 2; }, 10s),
                f.log());
  CHECK(f.logged("GPU at " + f.host.gpus()[3].bus +
                 ": the driver gives no UUID for it yet (not initialised): advertised once it "
                 "does"));
  for (const auto& device : f.kubelet->devices()) CHECK(device.id().find('?') == std::string::npos);
  f.host.set_initialised(1, true);
  f.host.set_initialised(3, true);
  CHECK_MESSAGE(f.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 4; }, 10s),
                f.log());
  CHECK(f.plugin->stop() == 0);
}

// As NVIDIA's plugin: SIGHUP reads the configuration again and, when it changed, starts again
// with it; unchanged it registers again, and a broken file keeps the running configuration.
TEST_CASE("SIGHUP: a changed configuration is taken, an unchanged or broken one is not") {
  require_root();
  PluginFixture f;
  f.start();
  REQUIRE(f.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 4; }, 10s));
  REQUIRE(::kill(f.plugin->pid(), SIGHUP) == 0);
  CHECK_MESSAGE(f.logged("SIGHUP: serving and registering again"), f.log());
  REQUIRE(f.kubelet->wait_for_registrations(2, 10s));

  // A key only the shim reads changes nothing here.
  Json config = Json::parse(gcr::test::read_file(f.dir / "config.json"));
  config["requests"] = {{"disable-require", true}};
  gcr::test::write_file(f.dir / "config.json", config.dump(2));
  REQUIRE(::kill(f.plugin->pid(), SIGHUP) == 0);
  REQUIRE(f.kubelet->wait_for_registrations(3, 10s));
  CHECK_FALSE(f.logged("the configuration changed"));

  // The plugin's own keys: it starts again with them, and the labels file moves.
  REQUIRE(gcr::test::exists(f.labels_file()));
  const std::string moved = f.dir / "features.d/moved";
  config["device-plugin"]["replicas"] = 2;
  config["device-plugin"]["labels-file"] = moved;
  gcr::test::write_file(f.dir / "config.json", config.dump(2));
  REQUIRE(::kill(f.plugin->pid(), SIGHUP) == 0);
  CHECK_MESSAGE(f.logged("SIGHUP: the configuration changed: stopping, then starting with it"),
                f.log());
  CHECK_MESSAGE(f.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 8; }, 10s),
                f.log());
  CHECK(f.kubelet->wait_for_registrations(4, 10s));
  CHECK(f.logged("labels file " + f.labels_file() + " removed: the configuration names another"));
  CHECK_FALSE(gcr::test::exists(f.labels_file()));
  CHECK(f.logged("labels written to " + moved));

  gcr::test::write_file(f.dir / "config.json", R"({"device-plugin":{"replicas":0}})");
  REQUIRE(::kill(f.plugin->pid(), SIGHUP) == 0);
  CHECK_MESSAGE(f.logged("keeping the configuration in use"), f.log());
  CHECK(f.logged("SIGHUP: config: `device-plugin.replicas` must be from 1 to 1024"));
  CHECK(f.kubelet->wait_for_registrations(5, 10s));
  CHECK(f.kubelet->devices().size() == 8);
  CHECK(f.plugin->running());

  // A SIGTERM right behind a SIGHUP that changes the configuration stops the plugin.
  config["device-plugin"]["replicas"] = 3;
  gcr::test::write_file(f.dir / "config.json", config.dump(2));
  REQUIRE(::kill(f.plugin->pid(), SIGHUP) == 0);
  CHECK(f.plugin->stop() == 0);
  CHECK_FALSE(gcr::test::exists(f.kubelet_dir + "/" + kSocket));
}

TEST_CASE("no driver at start: zero devices and one line; the GPUs come when the driver does") {
  require_root();
  PluginFixture f;
  const std::string proc = f.host.dev_root() + "/proc/driver/nvidia";
  REQUIRE(::rename(proc.c_str(), (proc + ".away").c_str()) == 0);
  f.start();
  CHECK(f.kubelet->devices().empty());
  std::this_thread::sleep_for(1200ms);
  const std::string log = f.log();
  const std::string line = "NVIDIA driver not found";
  CHECK(log.find(line) != std::string::npos);
  CHECK(log.find(line) == log.rfind(line));  // said once, not every tick
  CHECK(f.plugin->running());
  REQUIRE(::rename((proc + ".away").c_str(), proc.c_str()) == 0);
  REQUIRE_MESSAGE(
      f.kubelet->wait_for_devices([](const Devices& d) { return d.size() == 4; }, kWait), f.log());
  for (const auto& d : f.kubelet->devices()) CHECK(d.health() == "Healthy");
}

TEST_CASE("a broken configuration is one line and a wait, not a crash loop") {
  require_root();
  PluginFixture f;
  gcr::test::write_file(f.dir / "config.json", R"({"device-plugin":{"replicas":0}})");
  f.start_plugin();
  std::this_thread::sleep_for(1s);
  CHECK(f.plugin->running());
  CHECK(f.logged("`device-plugin.replicas` must be from 1 to 1024"));
  CHECK(f.plugin->stop() == 0);
}

// A DaemonSet moved from NVIDIA's plugin keeps its flags and variables: none is lost silently.
TEST_CASE("NVIDIA's plugin's flag is refused and its variables named, each with our key") {
  require_root();
  const auto flag = gcr::test::run({gcr::test::built("gpu-device-plugin"), "--mig-strategy=mixed"});
  CHECK(flag.exit_code == 2);
  CHECK(flag.err ==
        "gpu-device-plugin: --mig-strategy is NVIDIA's plugin's flag, not read here: set "
        "[device-plugin] mig-strategy\n");
  PluginFixture f;
  f.plugin_env.env["MIG_STRATEGY"] = "mixed";
  f.plugin_env.env["PASS_DEVICE_SPECS"] = "true";
  f.start();
  CHECK(
      f.logged("MIG_STRATEGY=mixed is NVIDIA's plugin's variable, not read here: set "
               "[device-plugin] mig-strategy in " +
               std::string(f.dir / "config.json")));
  CHECK(
      f.logged("PASS_DEVICE_SPECS=true is NVIDIA's plugin's variable, not read here: set "
               "nothing: the runtime writes the device rules into the container's spec"));
  CHECK(f.kubelet->devices().size() == 4);  // the plugin works on
}

TEST_CASE("end to end: Allocate's answer through containerd, the shim and runc, per strategy") {
  require_root();
  REQUIRE_MESSAGE(gcr::test::exists("/usr/bin/containerd"), "containerd is not installed");
  gcr::test::CdiFixture runtime(Json{{"runtime", {{"runtimes", {gcr::test::runc_path()}}}},
                                     {"requests", {{"accept-volume-mounts", true}}}});
  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = runtime.config_path();
  const gcr::test::Containerd containerd(runtime.path("containerd"), env);
  gcr::test::make_busybox_rootfs(runtime.path("ctr"));
  // The plugin runs on the runtime's simulated host, and gives IMEX channel 0 with the GPU (for
  // the CDI strategies by name, from the spec --mode imex writes).
  const auto imex = runtime.ctk(
      {"cdi", "generate", "--mode", "imex", "--output", runtime.spec_dir + "/imex.yaml"});
  REQUIRE_MESSAGE(imex.exit_code == 0, imex.err);
  const auto& gpu = runtime.host().gpus()[2];  // index 2, device minor differs
  int n = 0;
  for (const Json& strategy :
       {Json{"envvar"}, Json{"volume-mounts"}, Json{"cdi-annotations"}, Json{"cdi-cri"}}) {
    CAPTURE(strategy.dump());
    PluginFixture f(Json{{"device-list", strategy}, {"imex-channel", "enabled"}});
    Json config = Json::parse(gcr::test::read_file(f.dir / "config.json"));
    config["driver"] = runtime.host().driver_config()["driver"];
    gcr::test::write_file(f.dir / "config.json", config.dump(2));
    f.start();
    v1beta1::AllocateResponse response;
    REQUIRE(f.kubelet->allocate({gpu.uuid}, response).ok());
    std::vector<std::string> args{"run",           "--rm",
                                  "--runc-binary", gcr::test::built("gpu-container-runtime"),
                                  "--env",         "NVIDIA_DRIVER_CAPABILITIES=utility"};
    const auto extra = gcr::test::ctr_arguments(response.container_responses(0));
    args.insert(args.end(), extra.begin(), extra.end());
    args.insert(
        args.end(),
        {"--rootfs", runtime.path("ctr/rootfs"), "gcr-plugin-" + std::to_string(n++), "/bin/sh",
         "-c", "ls /dev | grep nvidia | tr '\\n' ' '; ls /dev/nvidia-caps-imex-channels"});
    const auto r = containerd.ctr(args);
    CHECK(r.err == "");
    // Exactly that GPU's node (the control nodes depend on the strategy's capabilities).
    std::set<std::string> gpu_nodes;
    for (std::size_t at = 0; at < r.out.size();) {
      const auto end = r.out.find(' ', at);
      const std::string name = r.out.substr(at, end - at);
      if (name.size() > 6 && name.find_first_not_of("0123456789", 6) == std::string::npos)
        gpu_nodes.insert(name);
      at = end == std::string::npos ? r.out.size() : end + 1;
    }
    CHECK(gpu_nodes == std::set<std::string>{"nvidia" + std::to_string(gpu.minor)});
    CHECK(r.out.find("nvidiactl") != std::string::npos);
    CHECK(r.out.find("nvidia-caps-imex-channels ") != std::string::npos);
    CHECK(r.out.ends_with(" channel0\n"));  // that channel alone
  }
}

TEST_CASE("the image built offline runs under containerd and registers with the kubelet") {
  require_root();
  REQUIRE_MESSAGE(gcr::test::exists("/usr/bin/containerd"), "containerd is not installed");
  PluginFixture f;
  const std::string tar = f.dir / "gpu-device-plugin.tar";
  const auto built = gcr::test::run(
      {gcr::test::test_source("../scripts/build-plugin-image.sh"), GCR_TEST_BINARY_DIR, tar});
  REQUIRE_MESSAGE(built.exit_code == 0, built.err);
  const std::string version = gcr::test::run({gcr::test::test_source("../scripts/version.sh")}).out;
  // A docker-archive tag without a registry is docker.io/library/..., as the kubelet names it.
  const std::string image =
      "docker.io/library/gpu-device-plugin:" + version.substr(0, version.find('\n'));
  const gcr::test::Containerd containerd(f.dir / "containerd", gcr::test::RunOptions{});
  const auto imported = containerd.ctr({"images", "import", tar});
  REQUIRE_MESSAGE(imported.exit_code == 0, imported.err);
  // Inside: the kubelet's directory, the host's dev root under /host, the configuration.
  gcr::test::write_file(f.dir / "in/config.toml",
                        "[driver]\nroot = \"/host\"\ndev-root = \"/host\"\n");
  f.start_kubelet();
  const auto started = containerd.ctr(
      {"run", "-d", "--mount",
       "type=bind,src=" + f.kubelet_dir + ",dst=/var/lib/kubelet/device-plugins,options=rbind:rw",
       "--mount", "type=bind,src=" + f.host.dev_root() + ",dst=/host,options=rbind:ro", "--mount",
       "type=bind,src=" + f.dir / "in" + ",dst=/etc/gpu-device-plugin,options=rbind:ro", image,
       "gcr-plugin-image", "/usr/bin/gpu-device-plugin", "--config",
       "/etc/gpu-device-plugin/config.toml"});
  REQUIRE_MESSAGE(started.exit_code == 0, started.err);
  CHECK(f.kubelet->wait_for_registrations(1, 30s));
  CHECK(f.kubelet->devices().size() == 4);
  (void)containerd.ctr({"task", "kill", "-s", "SIGTERM", "gcr-plugin-image"});
  for (int i = 0; i < 100 && gcr::test::exists(f.kubelet_dir + "/" + kSocket); ++i)
    std::this_thread::sleep_for(100ms);
  CHECK_FALSE(gcr::test::exists(f.kubelet_dir + "/" + kSocket));
  (void)containerd.ctr({"task", "delete", "-f", "gcr-plugin-image"});
  (void)containerd.ctr({"container", "delete", "gcr-plugin-image"});
  gcr::test::unmount_below(f.dir / "containerd");
}
