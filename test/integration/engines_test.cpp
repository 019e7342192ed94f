// The engines from Debian's packages, configured by gpu-ctk runtime configure, started by the
// tests on temporary roots and sockets and stopped afterwards: containerd (config dump and
// ctr run --runc-binary), dockerd (configured through nvidia-ctk's spellings; default runtime, -e
// NVIDIA_VISIBLE_DEVICES, --gpus, a failing request) and podman (--runtime). Nothing of the
// machine's own engine configuration is touched. Needs root.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "containerd.h"
#include "dockerd.h"
#include "gpu_fixture.h"
#include "toml/toml.h"

using gcr::Json;
using gcr::test::GpuFixture;

namespace {

using gcr::test::ctk;

void require_engine(const char* binary) {
  REQUIRE_MESSAGE(gcr::test::is_root(), "engines need root");
  const std::string missing =
      std::string(binary) + " is not installed: run scripts/install-deps.sh";
  REQUIRE_MESSAGE(gcr::test::exists(binary), missing);
}

using gcr::test::kListGpus;

// gpu-ctk's arguments that make the built shim containerd's default runtime in `file`.
std::vector<std::string> configure_containerd(const std::string& file) {
  return {"runtime",
          "configure",
          "--runtime=containerd",
          "--config",
          file,
          "--set-as-default",
          "--runtime-path",
          gcr::test::built("gpu-container-runtime")};
}

// What containerd makes of `file`, imports included.
std::string containerd_dump(const std::string& file) {
  const auto dump = gcr::test::run({"/usr/bin/containerd", "--config", file, "config", "dump"});
  REQUIRE_MESSAGE(dump.exit_code == 0, dump.err);
  return dump.out;
}

}  // namespace

TEST_CASE("containerd: the configured file loads, and ctr run --runc-binary gives the GPU") {
  require_engine("/usr/bin/containerd");
  GpuFixture f;
  f.configure({{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
  // The configuration as users have it (CRI enabled): what containerd makes of the result.
  const std::string user_config = f.path("containerd/user.toml");
  gcr::test::write_file(
      user_config,
      "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  "
      "SystemdCgroup = true\n");
  const auto configured = ctk(configure_containerd(user_config));
  REQUIRE(configured.exit_code == 0);
  CHECK(configured.out.find("restart containerd") != std::string::npos);
  const std::string dump = containerd_dump(user_config);
  CHECK(dump.find("default_runtime_name = \"nvidia\"") != std::string::npos);
  CHECK(dump.find("BinaryName = \"" + gcr::test::built("gpu-container-runtime") + "\"") !=
        std::string::npos);
  // The drop-in deleted by hand, not with --remove: containerd still loads the file (a plain
  // import of a missing file stops it: "failed to load TOML").
  const std::string drop_in = f.path("containerd/conf.d/99-gpu-container-runtime.toml");
  const std::string kept = gcr::test::read_file(drop_in);
  REQUIRE(::unlink(drop_in.c_str()) == 0);
  CHECK(containerd_dump(user_config).find("runtimes.nvidia") == std::string::npos);
  gcr::test::write_file(drop_in, kept);

  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
  const gcr::test::Containerd containerd(f.path("containerd"), env);
  const auto r = containerd.run_through_shim(
      f.path("ctr"), {"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=utility"}, kListGpus);
  CHECK(r.err == "");
  CHECK(r.out == "nvidia0 nvidiactl ");
}

TEST_CASE("containerd: configure starts from the file `containerd config default` writes") {
  require_engine("/usr/bin/containerd");
  GpuFixture f;
  const auto stock = gcr::test::run({"/usr/bin/containerd", "config", "default"});
  REQUIRE(stock.exit_code == 0);
  const std::string file = f.path("containerd/config.toml");
  gcr::test::write_file(file, stock.out);
  const auto configure = configure_containerd(file);
  const auto configured = ctk(configure);
  REQUIRE_MESSAGE(configured.exit_code == 0, configured.err);
  const std::string dump = containerd_dump(file);
  CHECK(dump.find("default_runtime_name = \"nvidia\"") != std::string::npos);
  CHECK(dump.find("BinaryName = \"" + gcr::test::built("gpu-container-runtime") + "\"") !=
        std::string::npos);
  // The stock settings stay: runc is still there for pods that do not ask for the runtime.
  CHECK(dump.find("[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]") !=
        std::string::npos);
  const std::string written = gcr::test::read_file(file);
  REQUIRE(ctk(configure).exit_code == 0);
  CHECK(gcr::test::read_file(file) == written);
}

// A node set up with nvidia-ctk keeps its conf.d/99-nvidia.toml, which containerd reads after
// ours: configure names it, and containerd shows why. Without --set-as-default our default goes.
TEST_CASE("containerd: a drop-in read after ours is named; a default unset without the flag") {
  require_engine("/usr/bin/containerd");
  GpuFixture f;
  const std::string file = f.path("containerd/config.toml");
  const std::string nvidia = f.path("containerd/conf.d/99-nvidia.toml");
  gcr::test::write_file(
      file, "version = 2\nimports = [\"" + f.path("containerd/conf.d") + "/*.toml\"]\n");
  gcr::test::write_file(nvidia,
                        "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                        "default_runtime_name = \"runc\"\n");
  auto configure = configure_containerd(file);
  const auto dump = [&] { return containerd_dump(file); };
  const auto configured = ctk(configure);
  REQUIRE_MESSAGE(configured.exit_code == 0, configured.err);
  CHECK(configured.err == "gpu-ctk runtime configure: warning: " + nvidia + " is read after " +
                              f.path("containerd/conf.d/99-gpu-container-runtime.toml") +
                              ", so what it sets wins over ours (nvidia-ctk's 99-nvidia.toml is "
                              "one: remove it)\n");
  CHECK(dump().find("default_runtime_name = \"runc\"") != std::string::npos);  // NVIDIA's won
  REQUIRE(::unlink(nvidia.c_str()) == 0);
  CHECK(dump().find("default_runtime_name = \"nvidia\"") != std::string::npos);
  CHECK(ctk(configure).err == "");

  configure.erase(configure.begin() + 5);  // --set-as-default
  REQUIRE(ctk(configure).exit_code == 0);
  const std::string without = dump();
  CHECK(without.find("default_runtime_name = \"nvidia\"") == std::string::npos);
  CHECK(without.find("BinaryName = \"" + gcr::test::built("gpu-container-runtime") + "\"") !=
        std::string::npos);
}

// CRI-O reads every file of crio.conf.d, a .bak too, after the drop-in it backs up.
TEST_CASE("crio: configure twice and remove leave no file but ours in crio.conf.d, then none") {
  REQUIRE(gcr::test::is_root());
  gcr::test::TempDir dir;
  const std::string conf_d = dir / "crio.conf.d";
  const std::string ours = conf_d + "/99-gpu-container-runtime.conf";
  std::vector<std::string> configure = {"runtime",  "configure",       "--runtime=crio",
                                        "--config", dir / "crio.conf", "--set-as-default"};
  const auto files = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(conf_d))
      names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  REQUIRE(ctk(configure).exit_code == 0);
  configure.pop_back();  // again, without --set-as-default: the drop-in rewritten
  REQUIRE(ctk(configure).exit_code == 0);
  CHECK(files() == std::vector<std::string>{"99-gpu-container-runtime.conf"});
  CHECK(gcr::test::read_file(ours).find("default_runtime") == std::string::npos);
  // The backup an earlier version left there goes.
  gcr::test::write_file(ours + ".bak", "[crio.runtime]\ndefault_runtime = \"nvidia\"\n");
  const auto cleaned = ctk(configure);
  CHECK(cleaned.out.find("removed " + ours + ".bak\n") != std::string::npos);
  CHECK(files() == std::vector<std::string>{"99-gpu-container-runtime.conf"});
  configure.push_back("--remove");
  REQUIRE(ctk(configure).exit_code == 0);
  CHECK(files().empty());
  // With the handlers a packaged CRI-O installs: ours copies the default's (its conmon), and
  // CRI-O's file is read, never written.
  const std::string packaged =
      "[crio.runtime]\ndefault_runtime = \"crun\"\n"
      "[crio.runtime.runtimes.crun]\nruntime_path = \"/usr/libexec/"
      "crio/crun\"\nmonitor_path = \"/usr/libexec/crio/conmon\"\n";
  gcr::test::write_file(conf_d + "/10-crio.conf", packaged);
  configure.pop_back();
  REQUIRE(ctk(configure).exit_code == 0);
  const auto written = gcr::parse_toml(gcr::test::read_file(ours), ours);
  REQUIRE(written.ok());
  CHECK((*written)["crio"]["runtime"]["runtimes"]["nvidia"]["monitor_path"].value_or(
            std::string()) == "/usr/libexec/crio/conmon");
  CHECK(gcr::test::read_file(conf_d + "/10-crio.conf") == packaged);
}

// A configuration file a configuration manager keeps elsewhere, linked into /etc.
TEST_CASE("a symlinked daemon.json is written where it leads, the link kept; --drop-in= refused") {
  REQUIRE(gcr::test::is_root());
  gcr::test::TempDir dir;
  const std::string managed = dir / "managed/daemon.json";
  gcr::test::write_file(managed, "{\"log-level\": \"warn\"}\n");
  gcr::test::make_dirs(dir / "docker");
  REQUIRE(::symlink(managed.c_str(), (dir / "docker/daemon.json").c_str()) == 0);
  const auto r = ctk({"runtime", "configure", "--runtime=docker", "--config",
                      dir / "docker/daemon.json", "--set-as-default"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  struct stat st {};
  REQUIRE(::lstat((dir / "docker/daemon.json").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  const Json written = Json::parse(gcr::test::read_file(managed));
  CHECK(written["default-runtime"] == "nvidia");
  CHECK(written["log-level"] == "warn");
  CHECK(gcr::test::read_file(managed + ".bak") == "{\"log-level\": \"warn\"}\n");

  // NVIDIA's --drop-in-config="" (edit the main file in place): one line saying it is not done.
  const auto in_place = ctk({"runtime", "configure", "--runtime=containerd", "--config",
                             dir / "config.toml", "--drop-in="});
  CHECK(in_place.exit_code == 1);
  CHECK(in_place.err.rfind("gpu-ctk runtime configure: --drop-in must be an absolute path (", 0) ==
        0);
  CHECK_FALSE(gcr::test::exists(dir / "config.toml"));
  // Other flags given empty are refused, not written ("path": "" would stop dockerd).
  for (const char* empty : {"--runtime-path=", "--runtime-name="}) {
    CAPTURE(empty);
    const auto refused = ctk(
        {"runtime", "configure", "--runtime=docker", "--config", dir / "empty/daemon.json", empty});
    CHECK(refused.exit_code == 1);
    CHECK_FALSE(gcr::test::exists(dir / "empty/daemon.json"));
  }
}

TEST_CASE("dockerd: our runtime as default; the env, --gpus and a failing request") {
  require_engine("/usr/sbin/dockerd");
  GpuFixture f;
  f.configure({{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
  // Debian's docker.io ships no daemon.json: users start from an empty one (`touch`).
  const std::string daemon_json = f.path("docker/daemon.json");
  gcr::test::write_file(daemon_json, "");
  // Configured as NVIDIA's documentation says, through the nvidia-ctk name (its spellings).
  gcr::test::make_symlink(gcr::test::built("gpu-ctk"), f.path("bin/nvidia-ctk"));
  const auto configured =
      gcr::test::run({f.path("bin/nvidia-ctk"), "runtime", "configure", "--runtime=docker",
                      "--config=" + daemon_json, "--nvidia-set-as-default",
                      "--nvidia-runtime-path=" + gcr::test::built("gpu-container-runtime"),
                      "--runtime-arg=--gpu-config=" + f.config_path()});
  REQUIRE_MESSAGE(configured.exit_code == 0, configured.err);
  gcr::test::make_symlink(gcr::test::built("gpu-ctk"), f.path("bin/nvidia-container-runtime-hook"));
  const gcr::test::Dockerd dockerd(f.path("docker"), daemon_json, f.path("bin"));
  REQUIRE_MESSAGE(dockerd.wait_until_serving("nvidia"), dockerd.log());
  const auto docker = [&](const std::vector<std::string>& args) { return dockerd.docker(args); };
  CHECK(docker({"info", "--format", "{{json .Runtimes}}"})
            .out.find("\"nvidia\":{\"path\":\"" + gcr::test::built("gpu-container-runtime")) !=
        std::string::npos);
  const std::string image = gcr::test::make_busybox_image_tar(f.path("image"));
  REQUIRE(docker({"import", image, "gcr-busybox"}).exit_code == 0);

  auto r = docker({"run", "--rm", "--network", "none", "-e", "NVIDIA_VISIBLE_DEVICES=1", "-e",
                   "NVIDIA_DRIVER_CAPABILITIES=utility", "gcr-busybox", "sh", "-c", kListGpus});
  CHECK(r.err == "");
  CHECK(r.out == "nvidia0 nvidiactl ");

  r = docker({"run", "--rm", "--network", "none", "--gpus", "device=1", "gcr-busybox", "sh", "-c",
              kListGpus});
  CHECK(r.err == "");
  CHECK(r.out == "nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl ");

  r = docker({"run", "--rm", "--network", "none", "-e", "NVIDIA_VISIBLE_DEVICES=7", "gcr-busybox",
              "true"});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("cannot give the container its GPUs: NVIDIA_VISIBLE_DEVICES: unknown GPU `7`: "
                   "this host has GPUs 0-3") != std::string::npos);
}

TEST_CASE("podman --runtime with the shim's configuration passed as a runtime flag") {
  require_engine("/usr/bin/podman");
  GpuFixture f;
  f.configure({{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
  const std::string image = gcr::test::make_busybox_image_tar(f.path("image"));
  const std::vector<std::string> podman = {"/usr/bin/podman",
                                           "--root",
                                           f.path("podman/storage"),
                                           "--runroot",
                                           f.path("podman/run"),
                                           "--cgroup-manager=cgroupfs",
                                           "--events-backend=file",
                                           "--storage-driver=vfs",
                                           "--runtime",
                                           gcr::test::built("gpu-container-runtime"),
                                           "--runtime-flag",
                                           "gpu-config=" + f.config_path()};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), podman.begin(), podman.end());
    return gcr::test::run(args);
  };
  REQUIRE(with({"import", image, "gcr-busybox"}).exit_code == 0);
  const auto r = with({"run", "--rm", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
                       "--network", "none", "-e", "NVIDIA_VISIBLE_DEVICES=2", "-e",
                       "NVIDIA_DRIVER_CAPABILITIES=utility", "gcr-busybox", "sh", "-c", kListGpus});
  CHECK(r.err == "");
  CHECK(r.out == "nvidia4 nvidiactl ");
}
