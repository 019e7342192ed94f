// sharing = "mps" against NVIDIA's real MPS control daemon (nvidia-cuda-mps-control from
// Debian's non-free nvidia-cuda-mps, test/real-driver.sh) placed in the simulated driver root,
// with the fake kubelet: the daemon's pipe and defaults, Allocate's limits per share, packing,
// a request larger than one GPU, the daemon killed and restarted, SIGTERM. What needs a GPU (a
// CUDA client held to the limits) is not tested here. Needs root.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "base/child_process.h"
#include "cdi_fixture.h"
#include "containerd.h"
#include "fake_kubelet.h"
#include "mps/mps_daemon.h"
#include "plugin_fixture.h"
#include "real_driver.h"

using gcr::Json;
using gcr::test::Devices;
using gcr::test::health_of;
using gcr::test::PluginFixture;
using namespace std::chrono_literals;

namespace {

using gcr::test::require_root;

constexpr auto kMpsWait = 15s;

bool all_health(const Devices& devices, const std::string& health) {
  return !devices.empty() && std::all_of(devices.begin(), devices.end(),
                                         [&](const auto& d) { return d.health() == health; });
}

// A file's bytes, or none where it cannot be read (a process gone from /proc).
std::string read_if_there(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A plugin sharing each GPU `replicas` ways through MPS, the real control daemon in its driver
// root.
struct MpsNode {
  PluginFixture f;
  std::string mps_root;
  std::string program;

  explicit MpsNode(int replicas = 4)
      : f(Json{{"sharing", "mps"}, {"replicas", replicas}}),
        mps_root(f.dir / "mps"),
        program(f.host.driver_root() + "/usr/bin/nvidia-cuda-mps-control") {
    const std::string real =
        gcr::test::real_driver_layouts() + "/flat/usr/bin/nvidia-cuda-mps-control";
    std::filesystem::remove(program);
    std::filesystem::copy_file(real, program);
    Json config = gcr::parse_json_strict(gcr::test::read_file(f.dir / "config.json")).value();
    config["device-plugin"]["mps-root"] = mps_root;
    gcr::test::write_file(f.dir / "config.json", config.dump(2));
  }

  // The daemon for containers of `shares` of the GPUs of `replicas` shares (each share count
  // and container size has its own).
  [[nodiscard]] std::string dir(int replicas = 4, int shares = 1) const {
    return mps_root + "/nvidia.com-gpu/" + std::to_string(shares) + "-of-" +
           std::to_string(replicas);
  }
  [[nodiscard]] std::string pipe(int replicas = 4, int shares = 1) const {
    return dir(replicas, shares) + "/pipe";
  }

  // One command to a daemon through NVIDIA's own client, as an operator would; asked again while
  // the daemon is busy with another client (the plugin's), as an operator would: the client
  // then says it cannot send, or (seen on a loaded machine) ends without the answer a get_*
  // command always has.
  [[nodiscard]] std::string ask(const std::string& command, int replicas = 4,
                                int shares = 1) const {
    for (int attempt = 0;; ++attempt) {
      auto r = gcr::run_child_with_input({program},
                                         {"CUDA_MPS_PIPE_DIRECTORY=" + pipe(replicas, shares)},
                                         command + "\n", 5, 65536);
      const bool no_answer = command.rfind("get_", 0) == 0 && r && r->exit_code == 0 &&
                             r->out.empty() && r->err.empty();
      const bool busy =
          no_answer || (r && (r->out + r->err).find("Cannot send command") != std::string::npos);
      if (busy && attempt < 20) {
        std::this_thread::sleep_for(50ms);
        continue;
      }
      return r && r->exit_code == 0 ? r->out.substr(0, r->out.find('\n')) : "(no answer)";
    }
  }

  // The pids running the control program as a daemon (`-f` as the plugin starts it, `-d` by
  // hand), with the pipe directory each was given. The plugin asks a daemon through the same
  // program, run as a client with the same pipe directory and no option: those come and go at
  // any time, and are left out, as is a process gone while it was looked at.
  [[nodiscard]] std::map<int, std::string> daemons() const {
    std::map<int, std::string> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      const std::string name = e.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::error_code ec;
      const auto exe = std::filesystem::read_symlink(e.path() / "exe", ec);
      if (ec || exe != program) continue;
      const std::string cmdline = read_if_there(e.path() / "cmdline");
      if (cmdline.find(std::string("\0-f\0", 4)) == std::string::npos &&
          cmdline.find(std::string("\0-d\0", 4)) == std::string::npos)
        continue;
      std::istringstream env(read_if_there(e.path() / "environ"));
      const std::string key = "CUDA_MPS_PIPE_DIRECTORY=";
      std::string& pipe_dir = out[std::stoi(name)];
      for (std::string var; std::getline(env, var, '\0');) {
        if (var.rfind(key, 0) == 0) pipe_dir = var.substr(key.size());
      }
    }
    return out;
  }

  // The pid of the daemon for containers of `shares` (the plugin's child), or -1.
  [[nodiscard]] int daemon_pid(int shares = 1) const {
    for (const auto& [pid, pipe_dir] : daemons()) {
      if (pipe_dir == pipe(4, shares)) return pid;
    }
    return -1;
  }

  // The plugin started and registered, its daemon serving, every share Healthy.
  void start_serving() {
    f.start();
    REQUIRE_MESSAGE(f.logged("MPS control daemon serving"), f.log());
    REQUIRE(f.kubelet->wait_for_devices([](const Devices& d) { return all_health(d, "Healthy"); },
                                        kMpsWait));
  }

  // An MPS server in the driver root that stays (a real one needs a GPU), and writes the PATH
  // and LD_LIBRARY_PATH it was started with to `seen`.
  void fake_server(const std::string& seen) const {
    gcr::test::write_file(f.host.driver_root() + "/usr/bin/nvidia-cuda-mps-server",
                          "#!/bin/sh\nprintf '%s\\n%s\\n' \"$PATH\" \"$LD_LIBRARY_PATH\" >" + seen +
                              ".new\nmv " + seen + ".new " + seen + "\nexec sleep 60\n",
                          0755);
  }
  // A server started by the one-share daemon, as a client's connection starts one: its pid.
  [[nodiscard]] int start_server() const {
    CHECK(ask("start_server -uid 0").empty());
    std::string server;
    for (int i = 0; i < 50 && server.empty(); ++i) {
      std::this_thread::sleep_for(100ms);
      server = ask("get_server_list");
    }
    REQUIRE_MESSAGE(!server.empty(), gcr::test::read_file(dir() + "/log/control.log"));
    return std::stoi(server);
  }

  // The plugin serving, a client's server (one that stays) started on the one-share daemon: the
  // daemon's pid and the server's. The server writes its PATH and LD_LIBRARY_PATH to
  // server.env in the fixture's directory.
  struct Running {
    int daemon;
    int server;
  };
  [[nodiscard]] Running serve_with_a_server() {
    fake_server(f.dir / "server.env");
    start_serving();
    const int daemon = daemon_pid(1);
    return {daemon, start_server()};
  }

  // The one-share daemon's control socket held as a pod can hold it, for one question, then let
  // go: GPU 0's first share Unhealthy, then Healthy, the daemon `daemon` and the client's server
  // `server` kept throughout.
  void hold_control_socket(int daemon, int server) const {
    const std::string share = shares_of(0).at(0);
    const auto share_is = [&](const std::string& health, std::chrono::seconds wait) {
      REQUIRE_MESSAGE(f.kubelet->wait_for_devices(
                          [&](const Devices& d) { return health_of(d, share) == health; }, wait),
                      f.log());
      CHECK(daemon_pid(1) == daemon);
      CHECK(::kill(server, 0) == 0);
    };
    {
      const gcr::test::UnixClient held(pipe() + "/control", SOCK_SEQPACKET);
      share_is("Unhealthy", 30s);
    }
    share_is("Healthy", kMpsWait);
  }

  // The IDs of the 4 shares of GPU `index`, as the kubelet sees them.
  [[nodiscard]] std::vector<std::string> shares_of(unsigned index) const {
    std::vector<std::string> out;
    for (const auto& d : f.kubelet->devices()) {
      if (d.id().rfind(f.host.gpus()[index].uuid, 0) == 0) out.push_back(d.id());
    }
    return out;
  }
};

}  // namespace

TEST_SUITE("mps") {
  TEST_CASE("a daemon per container size serves every GPU with k shares' threads and memory") {
    require_root();
    MpsNode node;
    node.start_serving();
    CHECK(node.f.logged("MPS control daemon serving 4 GPUs of nvidia.com/gpu"));
    CHECK(node.ask("get_default_active_thread_percentage") == "25.0");
    // By ordinal in the daemon's CUDA_VISIBLE_DEVICES (index order); 40960 MiB GPUs below bus
    // 0x80 and 16160 MiB above (the stub NVML): a quarter each, 4040 MiB printed as 3G.
    for (const auto& gpu : node.f.host.gpus()) {
      CAPTURE(gpu.uuid);
      const std::string expected = gpu.bus < "0000:80" ? "10G" : "3G";
      CHECK(node.ask("get_default_device_pinned_mem_limit " + std::to_string(gpu.index)) ==
            expected);
    }
    // The daemons for containers of 2, 3 and 4 shares: k quarters.
    for (int k = 2; k <= 4; ++k) {
      CAPTURE(k);
      CHECK(node.ask("get_default_active_thread_percentage", 4, k) ==
            std::to_string(25 * k) + ".0");
      CHECK(node.ask("get_default_device_pinned_mem_limit 0", 4, k) ==
            std::to_string(10 * k) + "G");
      CHECK(node.ask("get_default_device_pinned_mem_limit 3", 4, k) ==
            std::to_string(16160 * k / 4 / 1024) + "G");
    }
    std::set<std::string> pipes;
    for (const auto& [pid, pipe_dir] : node.daemons()) pipes.insert(pipe_dir);
    CHECK(pipes == std::set<std::string>{node.pipe(4, 1), node.pipe(4, 2), node.pipe(4, 3),
                                         node.pipe(4, 4)});
    const Devices devices = node.f.kubelet->devices();
    CHECK(devices.size() == 16);
    CHECK(all_health(devices, "Healthy"));
    struct stat st {};
    CHECK(::stat((node.pipe() + "/control").c_str(), &st) == 0);
    // Its /dev/shm is the directory containers get as theirs.
    const int pid = node.daemon_pid();
    REQUIRE(pid > 0);
    const std::string mounts = gcr::test::read_file("/proc/" + std::to_string(pid) + "/mountinfo");
    CHECK(mounts.find(" /dev/shm ") != std::string::npos);
    struct stat shm {};
    REQUIRE(::stat((node.dir() + "/shm").c_str(), &shm) == 0);
    CHECK((shm.st_mode & 07777) == 01777);
  }

  TEST_CASE("NVML's real sizes: every share Healthy, each client held to its daemon's limit") {
    require_root();
    // H100 80GB HBM3 and H200 as NVML reports them: a share is almost never whole GiB, and the
    // daemon prints its limit truncated to whole GiB (20389M reads back as 19G).
    for (const int replicas : {2, 3, 4, 7}) {
      CAPTURE(replicas);
      MpsNode node(replicas);
      std::string nvml;
      for (const auto& gpu : node.f.host.gpus())
        nvml += "memory " + gpu.bus.substr(5, 2) + (gpu.index == 1 ? " 143771\n" : " 81559\n");
      node.f.describe_nvml(nvml);
      node.start_serving();
      CHECK_MESSAGE(node.f.log().find("Unhealthy") == std::string::npos, node.f.log());
      const auto shares = node.shares_of(0);
      REQUIRE(shares.size() == static_cast<std::size_t>(replicas));
      for (int k = 1; k <= replicas; ++k) {
        CAPTURE(k);
        const auto mib = gcr::share_mib(81559, replicas, k);
        v1beta1::AllocateResponse response;
        REQUIRE(
            node.f.kubelet
                ->allocate(std::vector<std::string>(shares.begin(), shares.begin() + k), response)
                .ok());
        const auto& envs = response.container_responses(0).envs();
        CHECK(envs.at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == "0=" + std::to_string(mib) + "M");
        CHECK(response.container_responses(0).mounts(0).host_path() == node.pipe(replicas, k));
        // The daemon that container talks to holds that limit (printed in whole GiB).
        const std::string held = node.ask("get_default_device_pinned_mem_limit 0", replicas, k);
        CHECK_MESSAGE(gcr::mps_memory_reads_as(held, mib), held);
        // The H200 (ordinal 1 of each daemon) likewise.
        const std::string h200 = node.ask("get_default_device_pinned_mem_limit 1", replicas, k);
        CHECK_MESSAGE(gcr::mps_memory_reads_as(h200, gcr::share_mib(143771, replicas, k)), h200);
      }
      CHECK(node.f.logged(
          "MPS control daemon serving 4 GPUs of nvidia.com/gpu: each client of 1 of " +
          std::to_string(replicas) + " shares gets"));
      CHECK(all_health(node.f.kubelet->devices(), "Healthy"));
    }
  }

  TEST_CASE("Allocate: k shares' limits, pipe and shared memory; shares of two GPUs refused") {
    require_root();
    MpsNode node;
    node.start_serving();
    const auto shares = node.shares_of(0);
    REQUIRE(shares.size() == 4);
    v1beta1::AllocateResponse one;
    REQUIRE(node.f.kubelet->allocate({shares[0]}, one).ok());
    const auto& a = one.container_responses(0);
    CHECK(a.envs().at("NVIDIA_VISIBLE_DEVICES") == node.f.host.gpus()[0].uuid);
    CHECK(a.envs().at("CUDA_MPS_PIPE_DIRECTORY") == "/tmp/nvidia-mps");
    CHECK(a.envs().at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "25");
    CHECK(a.envs().at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == "0=10240M");
    REQUIRE(a.mounts_size() == 3);
    CHECK(a.mounts(0).host_path() == node.pipe());
    CHECK(a.mounts(0).container_path() == "/tmp/nvidia-mps");
    CHECK(a.mounts(0).read_only());
    CHECK(a.mounts(1).host_path() == "/dev/null");
    CHECK(a.mounts(1).container_path() == "/tmp/nvidia-mps/log");
    CHECK(a.mounts(2).host_path() == node.dir() + "/shm");
    CHECK(a.mounts(2).container_path() == "/dev/shm");
    CHECK(!a.mounts(2).read_only());

    // Three shares of one GPU: the daemon for containers of 3, which holds them to three
    // quarters.
    v1beta1::AllocateResponse three;
    REQUIRE(node.f.kubelet->allocate({shares[1], shares[2], shares[3]}, three).ok());
    const auto& t = three.container_responses(0);
    CHECK(t.envs().at("NVIDIA_VISIBLE_DEVICES") == node.f.host.gpus()[0].uuid);
    CHECK(t.envs().at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "75");
    CHECK(t.envs().at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == "0=30720M");
    REQUIRE(t.mounts_size() == 3);
    CHECK(t.mounts(0).host_path() == node.pipe(4, 3));
    CHECK(t.mounts(2).host_path() == node.dir(4, 3) + "/shm");
    CHECK(node.ask("get_default_active_thread_percentage", 4, 3) == "75.0");

    // Shares of two GPUs: refused, never spread silently, saying what each GPU had free when
    // the kubelet asked for a preferred set.
    const auto others = node.shares_of(1);
    v1beta1::PreferredAllocationResponse advice;
    REQUIRE(node.f.kubelet->preferred({shares[0], others[0], others[1]}, {}, 2, advice).ok());
    v1beta1::AllocateResponse refused;
    const auto status = node.f.kubelet->allocate({shares[0], others[0]}, refused);
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(status.error_message().find("MPS gives a container shares of one GPU") == 0);
    const auto& gpus = node.f.host.gpus();
    CHECK_MESSAGE(status.error_message().find("(free when the kubelet last asked: " + gpus[0].uuid +
                                              ": 1, " + gpus[1].uuid + ": 2)") != std::string::npos,
                  status.error_message());
  }

  TEST_CASE("replicas-by-gpu: a GPU in 2 shares gets a daemon of its own, half of it each") {
    require_root();
    MpsNode node;
    Json config = gcr::parse_json_strict(gcr::test::read_file(node.f.dir / "config.json")).value();
    config["device-plugin"]["replicas-by-gpu"] = {{"1", 2}};
    gcr::test::write_file(node.f.dir / "config.json", config.dump(2));
    node.start_serving();
    CHECK(node.f.kubelet->devices().size() == 14);  // 3 GPUs in 4 shares, one in 2
    CHECK(node.ask("get_default_active_thread_percentage") == "25.0");
    CHECK(node.ask("get_default_active_thread_percentage", 2) == "50.0");
    CHECK(node.ask("get_default_active_thread_percentage", 2, 2) == "100.0");
    // GPU 1 (40 GiB) is ordinal 0 of its daemons: half its memory, or all of it.
    CHECK(node.ask("get_default_device_pinned_mem_limit 0", 2) == "20G");
    CHECK(node.ask("get_default_device_pinned_mem_limit 0", 2, 2) == "40G");
    v1beta1::AllocateResponse half;
    REQUIRE(node.f.kubelet->allocate({node.shares_of(1)[1]}, half).ok());
    const auto& h = half.container_responses(0);
    CHECK(h.envs().at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "50");
    CHECK(h.envs().at("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") == "0=20480M");
    CHECK(h.mounts(0).host_path() == node.pipe(2));
    v1beta1::AllocateResponse whole;
    REQUIRE(node.f.kubelet->allocate(node.shares_of(1), whole).ok());
    CHECK(whole.container_responses(0).envs().at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "100");
    CHECK(whole.container_responses(0).mounts(0).host_path() == node.pipe(2, 2));
  }

  TEST_CASE("GetPreferredAllocation packs a request's shares onto one GPU") {
    require_root();
    MpsNode node;
    node.start_serving();
    std::vector<std::string> available;
    for (const auto& d : node.f.kubelet->devices()) available.push_back(d.id());
    v1beta1::PreferredAllocationResponse response;
    REQUIRE(node.f.kubelet->preferred(available, {}, 3, response).ok());
    const auto& ids = response.container_responses(0).deviceids();
    REQUIRE(ids.size() == 3);
    const std::string gpu = ids[0].substr(0, ids[0].find("::"));
    for (const auto& id : ids) CHECK(id.substr(0, id.find("::")) == gpu);
  }

  TEST_CASE("a daemon killed: its GPUs Unhealthy, the daemon started again, Healthy again") {
    require_root();
    MpsNode node;
    node.start_serving();
    // The one-share daemon, then one for larger containers: each is watched.
    for (const int k : {1, 3}) {
      CAPTURE(k);
      const int other = node.daemon_pid(k == 1 ? 2 : 1);
      const int first = node.daemon_pid(k);
      REQUIRE(first > 0);
      REQUIRE(::kill(first, SIGKILL) == 0);
      REQUIRE_MESSAGE(node.f.kubelet->wait_for_devices(
                          [](const Devices& d) { return all_health(d, "Unhealthy"); }, kMpsWait),
                      node.f.log());
      REQUIRE_MESSAGE(node.f.kubelet->wait_for_devices(
                          [](const Devices& d) { return all_health(d, "Healthy"); }, kMpsWait),
                      node.f.log());
      const int second = node.daemon_pid(k);
      CHECK(second > 0);
      CHECK(second != first);
      CHECK(node.daemon_pid(k == 1 ? 2 : 1) == other);  // the others left running
      CHECK(node.ask("get_default_active_thread_percentage", 4, k) ==
            std::to_string(25 * k) + ".0");
    }
    CHECK(node.f.logged("the MPS control daemon was killed by signal 9"));
  }

  // The control daemon runs nvidia-cuda-mps-server from its PATH when a client comes, and the
  // server loads libcuda.so.1: the simulated host's driver root, like a driver container's
  // /run/nvidia/driver, is on neither the host's PATH nor its loader's.
  TEST_CASE("a client's server is the driver root's, with the driver root's libcuda") {
    require_root();
    MpsNode node;
    const std::string root = node.f.host.driver_root();
    const std::string seen = node.f.dir / "server.env";
    const int server = node.serve_with_a_server().server;
    for (int i = 0; i < 50 && !gcr::test::exists(seen); ++i) std::this_thread::sleep_for(100ms);
    std::istringstream env(gcr::test::read_file(seen));
    std::string path;
    std::string library_path;
    std::getline(env, path);
    std::getline(env, library_path);
    const std::string bin = node.dir() + "/driver/bin";
    const std::string lib = node.dir() + "/driver/lib";
    CHECK(path.rfind(bin + ":", 0) == 0);
    CHECK(library_path == lib);
    CHECK(std::filesystem::canonical(bin + "/nvidia-cuda-mps-server") ==
          root + "/usr/bin/nvidia-cuda-mps-server");
    const auto libcuda = std::filesystem::canonical(lib + "/libcuda.so.1");
    CHECK(libcuda.string().rfind(root + "/", 0) == 0);
    CHECK(libcuda.filename().string().rfind("libcuda.so." + node.f.host.version(), 0) == 0);
    ::kill(server, SIGKILL);
  }

  // A pod can reach the control socket (its pipe directory is mounted in) and connect without a
  // word: every other client, the plugin's question too, waits behind it. Restarting the daemon
  // then would end every client's work on its GPUs.
  TEST_CASE("a client holding the control socket: the daemon kept for its clients' servers") {
    require_root();
    MpsNode node;
    const auto running = node.serve_with_a_server();
    const int daemon = running.daemon;
    const int server = running.server;
    node.hold_control_socket(daemon, server);
    CHECK(node.f.logged("kept running for its clients"));
    CHECK(node.f.logged("answers again"));
    // A command that changes the limits, then the socket held: setting them back cannot be
    // asked either, and the daemon is kept all the same; its limits are set back once it answers.
    (void)node.ask("set_default_active_thread_percentage 90");
    node.hold_control_socket(daemon, server);
    std::string pct;
    for (int i = 0; i < 50 && pct != "25.0"; ++i) {
      std::this_thread::sleep_for(100ms);
      pct = node.ask("get_default_active_thread_percentage");
    }
    CHECK(pct == "25.0");
    ::kill(server, SIGKILL);
  }

  // A daemon that stops answering holds each question to its 5 s timeout, and its stop 10 s
  // more. That wait is the MPS keeper's thread's: the plugin's loop reports a GPU's loss
  // meanwhile, then the daemon is replaced.
  TEST_CASE("a daemon that hangs holds up no other health report, and is replaced") {
    require_root();
    MpsNode node;
    node.start_serving();
    const int hung = node.daemon_pid(1);
    REQUIRE(hung > 0);
    REQUIRE(::kill(hung, SIGSTOP) == 0);
    // The one-share daemon is asked every 5 s: a question is out by now.
    std::this_thread::sleep_for(5500ms);
    const auto& gpu = node.f.host.gpus()[1];
    const auto lost = node.shares_of(1);
    REQUIRE(lost.size() == 4);
    const std::string dev = node.f.host.dev_root() + "/dev/nvidia" + std::to_string(gpu.minor);
    REQUIRE(::rename(dev.c_str(), (dev + ".away").c_str()) == 0);
    CHECK_MESSAGE(node.f.kubelet->wait_for_devices(
                      [&](const Devices& d) {
                        return std::all_of(lost.begin(), lost.end(), [&](const auto& id) {
                          return health_of(d, id) == "Unhealthy";
                        });
                      },
                      3s),
                  node.f.log());
    CHECK(node.f.logged("GPU " + gpu.uuid + " is Unhealthy: its device node is gone"));
    // Taken for dead once it does not answer (every share Unhealthy), killed and started again.
    const std::string kept = node.shares_of(0).at(0);
    REQUIRE_MESSAGE(
        node.f.kubelet->wait_for_devices(
            [&](const Devices& d) { return health_of(d, kept) == "Unhealthy"; }, kMpsWait),
        node.f.log());
    REQUIRE_MESSAGE(node.f.kubelet->wait_for_devices(
                        [&](const Devices& d) { return health_of(d, kept) == "Healthy"; }, 30s),
                    node.f.log());
    CHECK(node.daemon_pid(1) > 0);
    CHECK(node.daemon_pid(1) != hung);
    CHECK(node.f.logged("cannot ask the MPS control daemon `get_server_list`"));
    ::kill(hung, SIGCONT);
  }

  // After kill -9 of the plugin, the next one finds the daemon it adopts in /proc: its servers
  // are seen, and a held socket keeps it as it keeps its own.
  TEST_CASE("a daemon a killed plugin left, running a server, is kept while its socket is held") {
    require_root();
    MpsNode node;
    const auto running = node.serve_with_a_server();
    const int daemon = running.daemon;
    const int server = running.server;
    node.f.plugin->kill();
    node.f.start_plugin();  // its log starts afresh
    // Every daemon adopted (the kubelet still lists the first plugin's devices till then).
    bool serving = false;
    for (int i = 0; i < 150 && !serving; ++i) {
      std::this_thread::sleep_for(100ms);
      serving = node.f.log().find("each client of 4 of 4 shares") != std::string::npos;
    }
    REQUIRE_MESSAGE(serving, node.f.log());
    // This plugin's devices, not the first one's the kubelet still lists: on a loaded machine the
    // new list came with its shares not yet served, and that Unhealthy passed for the held
    // socket's.
    REQUIRE_MESSAGE(node.f.kubelet->wait_for_registrations(2, kMpsWait), node.f.log());
    REQUIRE_MESSAGE(node.f.kubelet->wait_for_devices(
                        [](const Devices& d) { return all_health(d, "Healthy"); }, kMpsWait),
                    node.f.log());
    REQUIRE(node.daemon_pid(1) == daemon);
    node.hold_control_socket(daemon, server);
    CHECK(node.f.logged("kept running for its clients"));
    ::kill(server, SIGKILL);
  }

  // A SIGHUP that finds the plugin's configuration changed starts the plugin again; its MPS
  // daemons do not depend on the device-list, so they and their clients' servers run on.
  TEST_CASE("SIGHUP with a changed device-list: the daemons and their clients' servers run on") {
    require_root();
    MpsNode node;
    const auto running = node.serve_with_a_server();
    REQUIRE(node.daemons().size() == 4);
    Json config = gcr::parse_json_strict(gcr::test::read_file(node.f.dir / "config.json")).value();
    config["device-plugin"]["device-list"] = Json::array({"volume-mounts"});
    gcr::test::write_file(node.f.dir / "config.json", config.dump(2));
    REQUIRE(::kill(node.f.plugin->pid(), SIGHUP) == 0);
    REQUIRE_MESSAGE(node.f.logged("the MPS control daemons keep serving their clients into the "
                                  "new configuration"),
                    node.f.log());
    REQUIRE_MESSAGE(node.f.kubelet->wait_for_registrations(2, kMpsWait), node.f.log());
    REQUIRE_MESSAGE(node.f.kubelet->wait_for_devices(
                        [](const Devices& d) { return all_health(d, "Healthy"); }, kMpsWait),
                    node.f.log());
    CHECK(node.daemon_pid(1) == running.daemon);
    CHECK(::kill(running.server, 0) == 0);
    CHECK(node.daemons().size() == 4);
    CHECK(node.ask("get_default_active_thread_percentage") == "25.0");
    CHECK_FALSE(node.f.log().find("stopped the MPS control daemon") != std::string::npos);
    // The new plugin's Allocate names the daemon that kept serving, in the new device-list's form.
    v1beta1::AllocateResponse response;
    REQUIRE_MESSAGE(node.f.kubelet->allocate({node.shares_of(0).at(0)}, response).ok(),
                    node.f.log());
    const auto& a = response.container_responses(0);
    CHECK(a.envs().at("NVIDIA_VISIBLE_DEVICES") == "/var/run/nvidia-container-devices");
    CHECK(a.envs().at("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE") == "25");
    REQUIRE(a.mounts_size() == 4);
    CHECK(a.mounts(0).container_path() ==
          "/var/run/nvidia-container-devices/" + node.f.host.gpus()[0].uuid);
    CHECK(a.mounts(1).host_path() == node.pipe());
    ::kill(running.server, SIGKILL);
  }

  // The plugin started again judges mps-root again: refused now (writable by others), the
  // daemons the last one left serving in it are stopped, not kept.
  TEST_CASE("SIGHUP with a changed configuration and mps-root refused now: the daemons stop") {
    require_root();
    MpsNode node;
    node.start_serving();
    REQUIRE(node.daemons().size() == 4);
    REQUIRE(::chmod(node.mps_root.c_str(), 0777) == 0);
    Json config = gcr::parse_json_strict(gcr::test::read_file(node.f.dir / "config.json")).value();
    config["device-plugin"]["device-list"] = Json::array({"volume-mounts"});
    gcr::test::write_file(node.f.dir / "config.json", config.dump(2));
    REQUIRE(::kill(node.f.plugin->pid(), SIGHUP) == 0);
    REQUIRE_MESSAGE(node.f.logged("every MPS share is Unhealthy until it is fixed"), node.f.log());
    bool stopped = false;
    for (int i = 0; i < 300 && !stopped; ++i) {
      stopped = node.daemons().empty();
      if (!stopped) std::this_thread::sleep_for(100ms);
    }
    CHECK_MESSAGE(stopped, node.f.log());
    CHECK(node.f.logged("stopped the MPS control daemon of nvidia.com/gpu"));
    REQUIRE(::chmod(node.mps_root.c_str(), 0755) == 0);
  }

  TEST_CASE(
      "a daemon a killed plugin left is kept with its clients; SIGTERM stops it and leaves no "
      "pipe") {
    require_root();
    MpsNode node;
    node.f.start();
    REQUIRE(node.f.logged("MPS control daemon serving"));
    // kill -9 of the plugin leaves its daemon; the next plugin keeps it and sets its limits.
    const int orphan = node.daemon_pid();
    REQUIRE(orphan > 0);
    node.f.plugin->kill();
    node.f.start_plugin();  // its log starts afresh
    bool serving = false;
    for (int i = 0; i < 150 && !serving; ++i) {
      std::this_thread::sleep_for(100ms);
      serving = node.f.log().find("MPS control daemon serving") != std::string::npos;
    }
    REQUIRE_MESSAGE(serving, node.f.log());
    CHECK(node.daemon_pid() == orphan);
    CHECK(node.ask("get_default_active_thread_percentage") == "25.0");
    REQUIRE(node.f.kubelet->wait_for_devices(
        [](const Devices& d) { return all_health(d, "Healthy"); }, kMpsWait));
    CHECK(node.daemons().size() == 4);  // each container size's, all kept
    CHECK(node.f.plugin->stop() == 0);
    CHECK(node.daemons().empty());
    for (int k = 1; k <= 4; ++k) CHECK(std::filesystem::is_empty(node.pipe(4, k)));
    CHECK(node.f.logged("stopped the MPS control daemon of nvidia.com/gpu"));
  }

  // A daemon an earlier plugin left, started without the driver links (as plugins before them
  // started it): kept while a client's server runs on it, replaced by one with the links once
  // none does, so the next server starts where the driver is not in the host's directories.
  TEST_CASE("a daemon an earlier plugin started without the driver links: kept, then replaced") {
    require_root();
    MpsNode node;
    node.start_serving();
    node.f.plugin->kill();
    CHECK(node.ask("quit").empty());
    for (int i = 0; i < 50 && node.daemon_pid(1) > 0; ++i) std::this_thread::sleep_for(100ms);
    REQUIRE(node.daemon_pid(1) < 0);
    // The earlier plugin's environment: a PATH that finds the server (a host with /usr/bin
    // wrappers), no library path.
    const std::string old_path =
        "PATH=" + node.f.host.driver_root() + "/usr/bin:" + gcr::kStandardSearchPath;
    const auto started =
        gcr::run_child_with_input({node.program, "-d"},
                                  {old_path, "CUDA_MPS_PIPE_DIRECTORY=" + node.pipe(),
                                   "CUDA_MPS_LOG_DIRECTORY=" + node.dir() + "/log"},
                                  "", 5, 65536);
    REQUIRE(started.ok());
    int earlier = -1;
    for (int i = 0; i < 50 && earlier < 0; ++i) {
      std::this_thread::sleep_for(100ms);
      earlier = node.daemon_pid(1);
    }
    REQUIRE(earlier > 0);
    REQUIRE(node.ask("get_server_list").empty());
    node.fake_server(node.f.dir / "server.env");
    const int server = node.start_server();

    node.f.start_plugin();
    REQUIRE_MESSAGE(node.f.logged("was started by an earlier plugin, without this one's "
                                  "environment (an earlier version's, without the driver links, "
                                  "or other GPUs): kept while it runs servers"),
                    node.f.log());
    REQUIRE(node.f.kubelet->wait_for_devices(
        [](const Devices& d) { return all_health(d, "Healthy"); }, kMpsWait));
    CHECK(node.daemon_pid(1) == earlier);
    CHECK(::kill(server, 0) == 0);

    // A client holding the control socket meanwhile keeps the plugin's quit from the daemon: it
    // is killed, not left serving beside its replacement.
    const auto serving_pipe = [&] {
      std::vector<int> out;
      for (const auto& [pid, pipe_dir] : node.daemons()) {
        if (pipe_dir == node.pipe()) out.push_back(pid);
      }
      return out;
    };
    int renewed = -1;
    {
      const gcr::test::UnixClient held(node.pipe() + "/control", SOCK_SEQPACKET);
      ::kill(server, SIGKILL);
      for (int i = 0; i < 300 && renewed < 0; ++i) {
        std::this_thread::sleep_for(100ms);
        const auto now = serving_pipe();
        if (now.size() == 1 && now[0] != earlier) renewed = now[0];
      }
    }
    REQUIRE_MESSAGE(renewed > 0, node.f.log());
    // Killed: gone, or a zombie its parent (not the plugin) has not reaped.
    std::string stat;
    std::getline(std::ifstream("/proc/" + std::to_string(earlier) + "/stat"), stat);
    CHECK((stat.empty() || stat.find(") Z ") != std::string::npos));
    CHECK(serving_pipe() == std::vector<int>{renewed});
    const std::string environment =
        gcr::test::read_file("/proc/" + std::to_string(renewed) + "/environ");
    CHECK(environment.find("PATH=" + node.dir() + "/driver/bin:") != std::string::npos);
    CHECK(environment.find("LD_LIBRARY_PATH=" + node.dir() + "/driver/lib") != std::string::npos);
    CHECK(node.f.kubelet->wait_for_devices(
        [](const Devices& d) { return all_health(d, "Healthy"); }, kMpsWait));
  }

  TEST_CASE(
      "end to end: a pod's container through containerd and the shim sees the daemon's "
      "pipe, its shared memory and its limits") {
    require_root();
    REQUIRE_MESSAGE(gcr::test::exists("/usr/bin/containerd"), "containerd is not installed");
    gcr::test::CdiFixture runtime(Json{{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
    gcr::test::RunOptions env;
    env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = runtime.config_path();
    const gcr::test::Containerd containerd(runtime.path("containerd"), env);
    gcr::test::make_busybox_rootfs(runtime.path("ctr"));
    MpsNode node;
    node.start_serving();
    const auto shares = node.shares_of(1);
    // A pod's container given Allocate's answer for `ids`: what it sees of MPS.
    const auto run_pod = [&](const std::vector<std::string>& ids) {
      v1beta1::AllocateResponse response;
      REQUIRE(node.f.kubelet->allocate(ids, response).ok());
      std::vector<std::string> args{"run",           "--rm",
                                    "--runc-binary", gcr::test::built("gpu-container-runtime"),
                                    "--env",         "NVIDIA_DRIVER_CAPABILITIES=compute,utility"};
      const auto extra = gcr::test::ctr_arguments(response.container_responses(0));
      args.insert(args.end(), extra.begin(), extra.end());
      args.insert(args.end(),
                  {"--rootfs", runtime.path("ctr/rootfs"), "gcr-mps", "/bin/sh", "-c",
                   "ls /tmp/nvidia-mps | tr '\\n' ' '; echo; echo $CUDA_MPS_PIPE_DIRECTORY "
                   "$CUDA_MPS_ACTIVE_THREAD_PERCENTAGE $CUDA_MPS_PINNED_DEVICE_MEM_LIMIT; "
                   "echo from-the-pod > /dev/shm/gcr-mps-test"});
      const auto r = containerd.ctr(args);
      CHECK(r.err == "");
      return r.out;
    };
    CHECK(run_pod({shares[2]}) ==
          "control control_lock control_privileged log \n/tmp/nvidia-mps 25 0=10240M\n");
    CHECK(gcr::test::read_file(node.dir() + "/shm/gcr-mps-test") == "from-the-pod\n");
    // Two shares of it: the pipe and shared memory of the daemon for containers of 2, half of
    // the GPU.
    CHECK(run_pod({shares[0], shares[3]}) ==
          "control control_lock control_privileged log \n/tmp/nvidia-mps 50 0=20480M\n");
    CHECK(gcr::test::read_file(node.dir(4, 2) + "/shm/gcr-mps-test") == "from-the-pod\n");

    // A hostile pod, as root and as a user: the pipe directory is read-only (no link planted
    // for the daemon to follow when it restarts, no growing its lock file), and its `log` FIFO
    // is /dev/null there (filling it no longer hangs the daemon).
    gcr::test::write_file(runtime.path("ctr/rootfs/etc/passwd"),
                          "root:x:0:0::/:/bin/sh\npod:x:4321:4321::/tmp:/bin/sh\n");
    const std::string attack =
        "busybox ln -sf /etc/passwd /tmp/nvidia-mps/control_lock 2>/dev/null || echo no-link; "
        "(echo more >> /tmp/nvidia-mps/control_lock) 2>/dev/null || echo no-append; "
        "busybox timeout 5 busybox dd if=/dev/zero of=/tmp/nvidia-mps/log bs=4096 count=16 "
        "2>/dev/null && echo log-took-64k; busybox stat -c %t:%T /tmp/nvidia-mps/log";
    for (const std::string& as : {std::string("root"), std::string("pod")}) {
      CAPTURE(as);
      v1beta1::AllocateResponse response;
      REQUIRE(node.f.kubelet->allocate({shares[2]}, response).ok());
      std::vector<std::string> args{"run", "--rm", "--runc-binary",
                                    gcr::test::built("gpu-container-runtime")};
      const auto extra = gcr::test::ctr_arguments(response.container_responses(0));
      args.insert(args.end(), extra.begin(), extra.end());
      args.insert(args.end(), {"--rootfs", runtime.path("ctr/rootfs"), "gcr-mps-hostile",
                               "/bin/busybox", "su", "-s", "/bin/sh", as, "-c", attack});
      const auto r = containerd.ctr(args);
      CHECK_MESSAGE(r.out == "no-link\nno-append\nlog-took-64k\n1:3\n", std::string(r.out + r.err));
    }
    struct stat lock {};
    struct stat log {};
    REQUIRE(::lstat((node.pipe() + "/control_lock").c_str(), &lock) == 0);
    REQUIRE(::lstat((node.pipe() + "/log").c_str(), &log) == 0);
    CHECK(S_ISREG(lock.st_mode));
    CHECK(lock.st_size == 0);
    CHECK(S_ISFIFO(log.st_mode));
    CHECK(node.ask("get_default_active_thread_percentage") == "25.0");
  }

  TEST_CASE("a client that raises its daemon's limits: set back on the next looks, and logged") {
    require_root();
    MpsNode node;
    node.start_serving();
    // What a pod that reaches the control socket can send: NVIDIA's 535 daemon takes these
    // from any user (580 refuses them from other users than the daemon's), and from root.
    const auto send = [&](const std::string& user, const std::string& commands) {
      for (int attempt = 0;; ++attempt) {
        const auto r = gcr::run_child_with_input(
            {"/usr/bin/setpriv", "--reuid=" + user, "--regid=" + user, "--clear-groups",
             node.program},
            {"CUDA_MPS_PIPE_DIRECTORY=" + node.pipe()}, commands, 5, 65536);
        REQUIRE(r.ok());
        // The daemon was busy with the plugin's own question: sent again.
        if (attempt < 20 && (r->out + r->err).find("Cannot send command") != std::string::npos) {
          std::this_thread::sleep_for(50ms);
          continue;
        }
        return r->out;
      }
    };
    const auto held = [&] {
      return node.ask("get_default_active_thread_percentage") + " " +
             node.ask("get_default_device_pinned_mem_limit 0");
    };
    // The plugin looks once a second; a sanitizer build on a loaded machine may need a few
    // looks (the two commands can straddle one).
    const auto set_back = [&] {
      for (int i = 0; i < 50 && held() != "25.0 10G"; ++i) std::this_thread::sleep_for(100ms);
      return held();
    };
    for (const std::string user : {"4321", "0"}) {
      CAPTURE(user);
      CHECK(send(user,
                 "set_default_active_thread_percentage 100\n"
                 "set_default_device_pinned_mem_limit 0 80G\n") == "100.0\n");
      CHECK(set_back() == "25.0 10G");
    }
    // One line per look: the two commands in one, or in two when they straddled a look. (The
    // log, when it lacks them, says whether the daemon was replaced instead, its limits set anew:
    // a daemon that does not answer for 5 s on a loaded machine, running no server, is.)
    CHECK_MESSAGE(node.f.logged("warning a client changed the limits of the MPS control daemon of "
                                "nvidia.com/gpu (containers of 1 of 4 shares) (`"),
                  node.f.log());
    CHECK(node.f.logged("`set_default_active_thread_percentage 100`"));
    CHECK(node.f.logged("`set_default_device_pinned_mem_limit 0 80G`"));
    CHECK(node.f.logged("): set back to 25% of the threads and 4040 MiB of pinned memory"));
    CHECK(all_health(node.f.kubelet->devices(), "Healthy"));
    CHECK(node.daemon_pid() > 0);
  }

  TEST_CASE("NVML loaded after the daemon: its running servers get the memory limit too") {
    // A default limit holds for servers started after it: a client's server already running
    // kept no memory limit, and so did the clients that joined it.
    require_root();
    MpsNode node;
    const std::string nvml = node.f.host.driver_root() + node.f.host.lib_dir() +
                             "/libnvidia-ml.so." + gcr::test::SimHost::version();
    REQUIRE(::rename(nvml.c_str(), (nvml + ".later").c_str()) == 0);
    const auto running = node.serve_with_a_server();
    const std::string server = std::to_string(running.server);
    CHECK(node.f.logged("memory not limited (NVML does not say how much there is)"));
    REQUIRE(::rename((nvml + ".later").c_str(), nvml.c_str()) == 0);
    for (int i = 0; i < 100 && !node.f.logged("each client now"); ++i)
      std::this_thread::sleep_for(100ms);
    CHECK(node.f.logged("each client now 4040 MiB of pinned memory"));
    CHECK(node.ask("get_default_device_pinned_mem_limit 0") == "10G");
    // The daemon's own log of what it was told (a real server answers get_* for itself; the
    // stand-in here does not).
    const std::string log = gcr::test::read_file(node.dir() + "/log/control.log");
    CHECK(log.find("Cmd:set_device_pinned_mem_limit " + server + " 0 10240M") != std::string::npos);
    CHECK(log.find("Cmd:set_device_pinned_mem_limit " + server + " 3 4040M") != std::string::npos);
    CHECK(node.daemon_pid(1) == running.daemon);
    // Its server gone, the plugin's SIGTERM stops every daemon within the fixture's wait: one
    // left serving held the stop past it, and the daemons outlived the test.
    ::kill(running.server, SIGKILL);
    CHECK(node.f.plugin->stop() == 0);
  }

  TEST_CASE("a GPU left in Exclusive_Process: said, with the command that sets it back") {
    // NVIDIA's MPS daemon sets the mode and leaves it when killed: a node moved from NVIDIA's
    // plugin keeps it, and only one of our daemons' servers at a time could use the GPU.
    require_root();
    MpsNode node;
    const auto& gpu = node.f.host.gpus().at(0);
    node.f.describe_nvml("computemode " + gpu.bus.substr(5, 2) + " 3\n");
    node.start_serving();
    const std::string said = "GPU " + std::to_string(gpu.index) + " (" + gpu.uuid +
                             ") is in compute mode Exclusive_Process: one MPS server at a time";
    for (int i = 0; i < 50 && !node.f.logged(said); ++i) std::this_thread::sleep_for(100ms);
    CHECK_MESSAGE(node.f.logged(said), node.f.log());
    CHECK(node.f.logged("; set it back with nvidia-smi -i " + gpu.uuid + " -c DEFAULT"));
    node.f.describe_nvml("");
    const std::string again = gpu.uuid + ") is in compute mode Default again";
    for (int i = 0; i < 50 && !node.f.logged(again); ++i) std::this_thread::sleep_for(100ms);
    CHECK(node.f.logged(again));
  }

  TEST_CASE("doctor --run: the CUDA probe as a client of a share's daemon, with its limits") {
    require_root();
    MpsNode node;
    Json config = gcr::parse_json_strict(gcr::test::read_file(node.f.dir / "config.json")).value();
    config["hooks"] = {{"ctk-path", gcr::test::built("gpu-ctk")}};
    gcr::test::write_file(node.f.dir / "config.json", config.dump(2));
    node.start_serving();
    gcr::test::RunOptions env;
    env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = node.f.dir / "config.json";
    const auto doctor = [&] {
      return gcr::test::run(
          {gcr::test::built("gpu-ctk"), "doctor", "--engine", "podman", "--run", "0"}, env);
    };
    // The stand-in libcuda reaches the daemon's control socket through the pipe directory the
    // container was given, and shows it a quarter of the SMs and its pinned-memory limit.
    const auto served = doctor();
    CHECK_MESSAGE(
        served.out.find("ok    run: GPU 0: mps: a client of the daemon in /tmp/nvidia-mps: "
                        "27 SMs, 10240 MiB of memory (CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25, "
                        "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=10240M)") != std::string::npos,
        served.out);
    CHECK(served.out.find("ok    run: GPU 0: kernel: 4096 results checked") != std::string::npos);
    CHECK(node.f.plugin->stop() == 0);
    const auto stopped = doctor();
    CHECK(stopped.exit_code == 1);
    CHECK_MESSAGE(stopped.out.find("FAIL  run: GPU 0: cuInit: CUDA_ERROR_MPS_CONNECTION_FAILED") !=
                      std::string::npos,
                  stopped.out);
  }

  TEST_CASE("doctor and info show the daemon's state; doctor fails when it does not answer") {
    require_root();
    MpsNode node;
    node.start_serving();
    gcr::test::RunOptions env;
    env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = node.f.dir / "config.json";
    const auto doctor = gcr::test::run({gcr::test::built("gpu-ctk"), "doctor"}, env);
    CHECK_MESSAGE(doctor.out.find("ok    mps: the MPS control daemons answer (containers of 1 to 4 "
                                  "shares): each of 4 shares 25% of the threads, pinned memory GPU "
                                  "0 10G, GPU 1 10G, GPU 2 3G, GPU 3 3G; 0 servers, 0 clients (" +
                                  node.pipe() + ")") != std::string::npos,
                  doctor.out);
    const auto info = gcr::test::run({gcr::test::built("gpu-ctk"), "info", "--json"}, env);
    REQUIRE(info.exit_code == 0);
    const Json facts = Json::parse(info.out);
    CHECK(facts["mps"]["ok"] == true);
    CHECK(facts["mps"]["pipe"] == node.pipe());
    CHECK(node.f.plugin->stop() == 0);
    const auto stopped = gcr::test::run({gcr::test::built("gpu-ctk"), "doctor"}, env);
    CHECK(stopped.exit_code != 0);
    CHECK_MESSAGE(stopped.out.find("FAIL  mps: the MPS control daemon does not answer "
                                   "`get_server_list`: Cannot find MPS control daemon process") !=
                      std::string::npos,
                  stopped.out);
  }
}
