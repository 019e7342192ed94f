// gpu-ctk doctor on a simulated node with real engine configurations (written by gpu-ctk
// runtime configure, read back by the installed containerd): a healthy node is all ok; each
// failure is made for real (a node removed or of the wrong major, NVML gone, engines not
// defaulting to us, cgroup drivers that disagree, a CDI spec from another driver, a
// device-list strategy the runtime refuses, a kubelet directory without sockets) and its line
// and the exit status are checked. --json field by field; --run starts a real container per GPU
// through the shim and runc, running our CUDA probe against the stand-in libcuda. Needs root.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>

#include "config/config.h"
#include "gpu_fixture.h"
#include "real_driver.h"

using gcr::Json;
using gcr::test::GpuFixture;
using gcr::test::ProcessResult;

namespace {

struct DoctorNode {
  GpuFixture f;

  explicit DoctorNode(const Json& extra = Json::object(),
                      const gcr::test::SimHostOptions& options = {})
      : f(options, config(extra)) {}

  Json config(const Json& extra) const {
    Json c = {{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}};
    c.merge_patch(extra);
    return c;
  }

  // The doctor's own configuration: spec dirs and kubelet dir inside the fixture.
  void configure(const Json& extra = Json::object()) const {
    Json c = {{"runtime", {{"runtimes", {gcr::test::runc_path()}}}},
              {"cdi", {{"spec-dirs", {f.path("cdi")}}}},
              {"device-plugin", {{"kubelet-dir", f.path("kubelet/device-plugins")}}}};
    c.merge_patch(extra);
    f.configure(c);
  }

  std::string bin_dir;  // searched first for the node's programs (a kubelet), when set

  ProcessResult ctk(const std::vector<std::string>& args) const {
    std::vector<std::string> argv{gcr::test::built("gpu-ctk")};
    argv.insert(argv.end(), args.begin(), args.end());
    gcr::test::RunOptions env;
    env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
    if (!bin_dir.empty()) env.env["PATH"] = bin_dir + ":/usr/sbin:/usr/bin:/sbin:/bin";
    if (!nvml_description.empty()) env.env["GCR_STUB_NVML"] = nvml_description;
    return gcr::test::run(argv, env);
  }

  std::string nvml_description;  // the stub NVML's description file, when set

  void register_engine(const std::string& engine, const std::string& file, bool as_default) const {
    std::vector<std::string> args{"runtime",
                                  "configure",
                                  "--runtime=" + engine,
                                  "--config",
                                  file,
                                  "--runtime-path",
                                  gcr::test::built("gpu-container-runtime")};
    if (as_default) args.push_back("--set-as-default");
    const auto r = ctk(args);
    REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  }

  std::string docker_json() const { return f.path("docker/daemon.json"); }
  std::string containerd_toml() const { return f.path("containerd/config.toml"); }
  std::string kubelet_yaml() const { return f.path("kubelet/config.yaml"); }

  // Docker and containerd registered and default, a CDI spec for this driver.
  void make_healthy() const {
    configure();
    register_engine("docker", docker_json(), true);
    register_engine("containerd", containerd_toml(), true);
    const auto spec = ctk({"cdi", "generate", "--output", f.path("cdi/nvidia.yaml")});
    REQUIRE_MESSAGE(spec.exit_code == 0, spec.err);
  }

  std::string nvidia_toml() const { return f.path("nvidia/config.toml"); }

  ProcessResult doctor(const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args{
        "doctor",          "--engine",         "docker",       "--engine",
        "containerd",      "--docker-config",  docker_json(),  "--containerd-config",
        containerd_toml(), "--kubelet-config", kubelet_yaml(), "--nvidia-config",
        nvidia_toml()};
    args.insert(args.end(), extra.begin(), extra.end());
    return ctk(args);
  }
};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (auto end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// The one line that starts with `prefix` ("FAIL  driver: GPU 1"), or "" when none does.
std::string line_starting(const std::string& out, const std::string& prefix) {
  std::string found;
  for (const auto& line : lines_of(out)) {
    if (line.rfind(prefix, 0) == 0) {
      const std::string twice = "two lines start with " + prefix;
      CHECK_MESSAGE(found.empty(), twice);
      found = line;
    }
  }
  return found;
}

std::vector<std::string> not_ok(const std::string& out) {
  std::vector<std::string> bad;
  for (const auto& line : lines_of(out)) {
    if (line.rfind("ok    ", 0) != 0) bad.push_back(line);
  }
  return bad;
}

}  // namespace

TEST_CASE("doctor: a healthy simulated node is all ok and exits 0") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const auto r = node.doctor();
  CHECK(r.err == "");
  CHECK(not_ok(r.out) == std::vector<std::string>{});
  CHECK(r.exit_code == 0);
  const std::string v = gcr::test::SimHost::version();
  CHECK(line_starting(r.out, "ok    driver: kernel module " + v + " loaded") != "");
  CHECK(line_starting(r.out, "ok    driver: libcuda answers: CUDA ") != "");
  CHECK(line_starting(r.out, "ok    docker: `nvidia` is the default runtime") != "");
  CHECK(line_starting(r.out, "ok    containerd: `nvidia` is the default runtime") != "");
  CHECK(line_starting(r.out, "ok    cdi: nvidia.com/gpu: ") != "");
  CHECK(line_starting(r.out, "ok    kubernetes: no kubelet device-plugin directory") != "");
}

// NVIDIA's packages, replaced by ours, leave their conffile: what it hardened must not be lost
// without a word.
TEST_CASE("doctor: NVIDIA's configuration left behind, and what of it ours lacks") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  CHECK(line_starting(node.doctor().out, "ok    runtime: NVIDIA's").empty());  // none left

  // NVIDIA's file as its packages ship it: nothing ours lacks.
  gcr::test::make_dirs(node.f.path("nvidia"));
  gcr::test::write_file(node.nvidia_toml(),
                        "#accept-nvidia-visible-devices-envvar-when-unprivileged = true\n"
                        "disable-require = false\n"
                        "supported-driver-capabilities = "
                        "\"compat32,compute,display,graphics,ngx,utility,video\"\n"
                        "[nvidia-container-cli]\nldconfig = \"@/sbin/ldconfig.real\"\n"
                        "load-kmods = true\n[nvidia-container-runtime]\nlog-level = \"info\"\n"
                        "mode = \"auto\"\nruntimes = [\"docker-runc\", \"runc\", \"crun\"]\n"
                        "[nvidia-container-runtime.modes.cdi]\n"
                        "annotation-prefixes = [\"cdi.k8s.io/\"]\n"
                        "default-kind = \"nvidia.com/gpu\"\n"
                        "spec-dirs = [\"/etc/cdi\", \"/var/run/cdi\"]\n");
  const auto stock = node.doctor();
  CHECK(stock.exit_code == 0);
  CHECK(line_starting(stock.out, "ok    runtime: NVIDIA's") ==
        "ok    runtime: NVIDIA's configuration is left; ours holds what it sets (" +
            node.nvidia_toml() + ")");

  // Hardened: unprivileged containers may not ask through their environment.
  gcr::test::write_file(node.nvidia_toml(),
                        "accept-nvidia-visible-devices-envvar-when-unprivileged = false\n"
                        "accept-nvidia-visible-devices-as-volume-mounts = true\n");
  const auto hardened = node.doctor();
  CHECK(hardened.exit_code == 1);
  CHECK(line_starting(hardened.out, "FAIL  runtime: NVIDIA's") ==
        "FAIL  runtime: NVIDIA's configuration asks for what ours does not have: [requests] "
        "accept-env-when-unprivileged = false, [requests] accept-volume-mounts = true "
        "(unprivileged containers get GPUs from their environment here, which NVIDIA's refused) "
        "(" +
            node.nvidia_toml() + "); fix: gpu-ctk config import " + node.nvidia_toml() +
            " shows it as ours; --write installs it");

  // Ours refuses them too: what is left is a warning (the plugin's envvar strategy fails now,
  // which is another check's line).
  node.configure({{"requests", {{"accept-env-when-unprivileged", false}}}});
  const auto part = node.doctor();
  CHECK(line_starting(part.out, "warn  runtime: NVIDIA's")
            .find("asks for what ours does not have: [requests] accept-volume-mounts = true (") !=
        std::string::npos);
  node.configure(
      {{"requests", {{"accept-env-when-unprivileged", false}, {"accept-volume-mounts", true}}}});
  CHECK(line_starting(node.doctor().out, "ok    runtime: NVIDIA's") ==
        "ok    runtime: NVIDIA's configuration is left; ours holds what it sets (" +
            node.nvidia_toml() + ")");

  gcr::test::write_file(node.nvidia_toml(), "[nvidia-container-runtime\n");
  CHECK(line_starting(node.doctor().out,
                      "warn  runtime: NVIDIA's configuration is left and "
                      "cannot be read as ours: ") != "");
}

TEST_CASE("doctor: a missing GPU node, a node of the wrong major, no nvidia-uvm, no NVML") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const auto& gpus = node.f.host().gpus();
  const std::string dev = node.f.host().dev_root() + "/dev/";
  const std::string gone = dev + "nvidia" + std::to_string(gpus.at(0).minor);
  const std::string wrong = dev + "nvidia" + std::to_string(gpus.at(1).minor);
  REQUIRE(::unlink(gone.c_str()) == 0);
  REQUIRE(::unlink(wrong.c_str()) == 0);
  REQUIRE(::mknod(wrong.c_str(), S_IFCHR | 0666, makedev(1, gpus.at(1).minor)) == 0);
  REQUIRE(::unlink((dev + "nvidia-uvm").c_str()) == 0);
  const std::string libs = node.f.host().driver_root() + node.f.host().lib_dir();
  const std::string v = gcr::test::SimHost::version();
  for (const std::string& name : {"libnvidia-ml.so." + v, std::string("libnvidia-ml.so.1")})
    ::unlink((libs + "/" + name).c_str());

  const auto r = node.doctor();
  CHECK(r.exit_code == 1);
  const std::string missing = line_starting(r.out, "FAIL  driver: GPU 0: ");
  CHECK(missing.find(gone) != std::string::npos);
  CHECK(missing.find("fix: nvidia-modprobe -c " + std::to_string(gpus.at(0).minor)) !=
        std::string::npos);
  const std::string major = line_starting(r.out, "FAIL  driver: GPU 1: ");
  CHECK(major.find("device node has major 1, expected 195") != std::string::npos);
  CHECK(line_starting(r.out,
                      "FAIL  driver: nvidia-uvm is not loaded: CUDA fails in every "
                      "container") != "");
  CHECK(line_starting(r.out, "FAIL  driver: no libnvidia-ml.so." + v + " in the driver root") !=
        "");
  CHECK(line_starting(r.out, "ok    driver: GPU 2 ") != "");

  // A GPU the driver has not initialised (no nvidia-persistenced) gives no UUID yet.
  node.f.host().set_initialised(2, false);
  const std::string uninitialised = line_starting(node.doctor().out, "warn  driver: GPU 2 at ");
  CHECK(uninitialised.find("the driver gives no UUID for it yet (not initialised)") !=
        std::string::npos);
  CHECK(uninitialised.find("fix: systemctl enable --now nvidia-persistenced") != std::string::npos);
}

// The module not loaded: why, as the host tells it (nouveau, no module for this kernel, Secure
// Boot), each with its fix; modprobe's own error otherwise.
TEST_CASE("doctor: the kernel module not loaded: nouveau, no module for the kernel, Secure Boot") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const std::string dev = node.f.host().dev_root();
  std::filesystem::remove_all(dev + "/proc/driver/nvidia");
  const auto failure = [&](const std::string& start) {
    const auto r = node.doctor();
    CHECK(r.exit_code == 1);
    return line_starting(r.out, start);
  };
  const std::string not_loaded = "FAIL  driver: the NVIDIA kernel module is not loaded: ";
  CHECK(failure(not_loaded)
            .find("; fix: modprobe nvidia (dmesg | grep -i nvrm says why it "
                  "fails)") != std::string::npos);
  gcr::test::write_file(dev + "/proc/modules",
                        "nouveau 2768896 0 - Live 0x0000000000000000\n"
                        "drm_ttm_helper 16384 1 nouveau, Live 0x0000000000000000\n");
  CHECK(failure(not_loaded).find("not loaded: the nouveau driver is loaded and holds the GPUs (") !=
        std::string::npos);
  gcr::test::write_file(dev + "/proc/modules", "nvme 57344 2 - Live 0x0000000000000000\n");
  gcr::test::write_file(dev + "/proc/sys/kernel/osrelease", "6.1.0-41-amd64\n");
  // The driver root's modules.dep (the host's, for root /); the kernel's own
  // nvidia-wmi-ec-backlight is not NVIDIA's driver.
  const std::string dep = node.f.host().driver_root() + "/lib/modules/6.1.0-41-amd64/modules.dep";
  gcr::test::write_file(dep,
                        "kernel/drivers/nvme/host/nvme.ko.xz: kernel/drivers/nvme/host/"
                        "nvme-core.ko.xz\nupdates/dkms/nvidia-current-uvm.ko.xz:\n"
                        "kernel/drivers/platform/x86/nvidia-wmi-ec-backlight.ko.xz:\n");
  const std::string none = failure(not_loaded);
  CHECK(none.find("not loaded: no NVIDIA module is built for the running kernel 6.1.0-41-amd64 (" +
                  dep + " lists none) (") != std::string::npos);
  CHECK(none.find("fix: install the kernel's headers (linux-headers-6.1.0-41-amd64, or "
                  "kernel-devel-6.1.0-41-amd64) and rebuild the driver's module") !=
        std::string::npos);
  // Debian's packages build nvidia-current.ko.
  gcr::test::write_file(dep,
                        "updates/dkms/nvidia-current.ko.xz:\nupdates/dkms/"
                        "nvidia-current-uvm.ko.xz: updates/dkms/nvidia-current.ko.xz\n");
  CHECK(failure(not_loaded).find("fix: modprobe nvidia (dmesg") != std::string::npos);
  // Secure Boot on: said in the fix, beside modprobe (a signed module loads all the same).
  gcr::test::write_file(
      dev + "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e98c0e5eeb7c",
      std::string("\x06\0\0\0\x01", 5));
  CHECK(failure(not_loaded)
            .find("fix: modprobe nvidia; Secure Boot is on: where it says `Key was "
                  "rejected by service`, enroll the module's signing key") != std::string::npos);
  // The module loaded, its /proc files unreadable: their error, no guessed cause.
  gcr::test::write_file(dev + "/proc/modules", "nvidia 54087680 0 - Live 0x0000000000000000\n");
  CHECK(
      failure("FAIL  driver: NVIDIA driver not found: ").find("fix: check dmesg for NVRM errors") !=
      std::string::npos);
  // WSL2: Microsoft's GPU node and no NVIDIA module in Linux, said instead of a module to load.
  std::filesystem::remove(dev + "/proc/modules");
  gcr::test::write_file(dev + "/dev/dxg", "");
  const std::string wsl = failure("FAIL  driver: NVIDIA driver not found: this is WSL2 (");
  CHECK(wsl.find("; fix: in WSL2 use NVIDIA's container toolkit") != std::string::npos);
  CHECK(wsl.find("modprobe") == std::string::npos);
}

// NVSwitch systems need NVIDIA's fabric manager before CUDA can use a GPU (error 802). The
// simulated host has one NVSwitch and runs it.
TEST_CASE("doctor: NVSwitches without the fabric manager; with it running") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const std::string dev = node.f.host().dev_root();
  CHECK(line_starting(node.doctor().out,
                      "ok    driver: the fabric manager runs for the 1 "
                      "NVSwitch (") != "");
  std::filesystem::remove_all(dev + "/proc/" + gcr::test::SimHost::kFabricManagerPid);
  gcr::test::write_file(dev + "/proc/1/comm", "systemd\n");
  const std::string warned =
      line_starting(node.doctor().out,
                    "warn  driver: this host has 1 NVSwitch and no "
                    "nv-fabricmanager process runs: CUDA fails with error 802");
  CHECK(warned.find("fix: install the fabric manager of the driver's exact version") !=
        std::string::npos);
  REQUIRE(::unlink((dev + "/dev/nvidia-nvswitch0").c_str()) == 0);
  CHECK(node.doctor().out.find("fabric") == std::string::npos);  // no NVSwitch: not said
}

TEST_CASE("doctor: a driver upgraded without a reboot: the module and the libraries differ") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const std::string v = gcr::test::SimHost::version();
  const std::string file = node.f.host().dev_root() + "/proc/driver/nvidia/version";
  std::string text = gcr::test::read_file(file);
  REQUIRE(text.find(v) != std::string::npos);
  text.replace(text.find(v), v.size(), "535.183.01");  // the module still running
  gcr::test::write_file(file, text);
  const auto r = node.doctor();
  CHECK(r.exit_code == 1);
  const std::string said = line_starting(
      r.out,
      "FAIL  driver: the kernel module 535.183.01 is loaded but the driver's libraries are " + v +
          ": the driver was upgraded without a reboot");
  CHECK_MESSAGE(said.find("fix: reboot") != std::string::npos, r.out);
  // Said once, as what it is: not as libraries to reinstall.
  CHECK(r.out.find("no libcuda.so.535.183.01") == std::string::npos);
  // Libraries older than the module are leftovers, not an upgrade: a reboot would not help.
  text = gcr::test::read_file(file);
  text.replace(text.find("535.183.01"), 10, "580.95.05");
  gcr::test::write_file(file, text);
  const auto newer = node.doctor();
  CHECK(newer.out.find("upgraded without a reboot") == std::string::npos);
  CHECK(line_starting(newer.out, "FAIL  driver: no libcuda.so.580.95.05 in the driver root") != "");
}

TEST_CASE("doctor: GPUs in a compute mode or MIG state that keeps containers from them") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const auto& gpus = node.f.host().gpus();
  node.nvml_description = node.f.path("nvml.txt");
  // GPU 2 Prohibited, GPU 3 Exclusive_Process (left by NVIDIA's MPS daemon), GPU 0 in MIG mode
  // with no MIG device made (GPU 1 keeps one).
  gcr::test::write_file(node.nvml_description, "computemode " + gpus.at(2).bus.substr(5, 2) +
                                                   " 2\ncomputemode " +
                                                   gpus.at(3).bus.substr(5, 2) + " 3\nmigmode " +
                                                   gpus.at(0).bus.substr(5, 2) + " 1\nmig " +
                                                   gpus.at(1).bus.substr(5, 2) + " 1 0 1 4864\n");
  const auto r = node.doctor();
  CHECK(r.exit_code == 1);
  const auto said = [&](const std::string& prefix, unsigned i, const std::string& rest) {
    return line_starting(r.out, prefix + "driver: GPU " + std::to_string(gpus.at(i).index) + " (" +
                                    gpus.at(i).uuid + ") " + rest);
  };
  CHECK_MESSAGE(
      said("FAIL  ", 2, "is in compute mode Prohibited")
              .find("fix: nvidia-smi -i " + gpus.at(2).uuid + " -c DEFAULT") != std::string::npos,
      r.out);
  CHECK(said("warn  ", 3, "is in compute mode Exclusive_Process") != "");
  CHECK(said("FAIL  ", 0, "is in MIG mode with no MIG device") != "");
  CHECK(said("FAIL  ", 1, "is in MIG mode") == "");
}

TEST_CASE("doctor: a driver at /usr/local/nvidia and Ubuntu's ldconfig wrapper are all ok") {
  REQUIRE(gcr::test::is_root());
  gcr::test::TempDir sbin;
  gcr::test::write_file(sbin.path() + "/ldconfig", "#!/bin/sh\nexec /sbin/ldconfig.real \"$@\"\n",
                        0755);
  REQUIRE(gcr::test::run({"/bin/cp", "/sbin/ldconfig", sbin.path() + "/ldconfig.real"}).exit_code ==
          0);
  gcr::test::SimHostOptions options;
  options.layout = gcr::test::LibLayout::kUsrLocalNvidia;
  const Json hooks = {{"hooks", {{"ldconfig", "@" + sbin.path() + "/ldconfig"}}}};
  DoctorNode node(hooks, options);
  node.make_healthy();
  node.configure(hooks);
  const auto r = node.doctor();
  CHECK(not_ok(r.out) == std::vector<std::string>{});
  CHECK(line_starting(r.out, "ok    driver: libcuda answers: CUDA ") != "");
  CHECK(line_starting(r.out, "ok    runtime: ldconfig is a static host program (" + sbin.path() +
                                 "/ldconfig.real)") != "");

  // The cache still names /usr/local/nvidia/lib64, but no configuration does any more: its
  // libraries are refused, and the line says why.
  gcr::test::write_file(node.f.host().driver_root() + "/etc/ld.so.conf.d/nvidia.conf", "\n");
  const auto refused = node.doctor();
  const std::string line = line_starting(refused.out, "FAIL  driver: no libnvidia-ml.so.");
  CHECK(line.find("/usr/local/nvidia/lib64/libnvidia-ml.so." + gcr::test::SimHost::version() +
                  " from the driver root's ld.so.cache: not in a library directory") !=
        std::string::npos);
}

TEST_CASE("doctor: docker not defaulting to us warns; containerd still on runc fails") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  gcr::test::write_file(node.docker_json(), "{\"runtimes\": {\"nvidia\": {\"path\": \"" +
                                                gcr::test::built("gpu-container-runtime") +
                                                "\"}}}\n");
  gcr::test::write_file(node.containerd_toml(), "version = 2\n");
  node.register_engine("containerd", node.containerd_toml(), false);

  const auto r = node.doctor();
  CHECK(r.exit_code == 1);
  CHECK(line_starting(r.out, "warn  docker: the default runtime is `runc`, not `nvidia`: ") != "");
  const std::string containerd =
      line_starting(r.out, "FAIL  containerd: the default runtime is `runc`, not `nvidia`: ");
  CHECK(containerd.find("could not load NVML") != std::string::npos);
  CHECK(containerd.find("(containerd --config " + node.containerd_toml() + " config dump)") !=
        std::string::npos);
  CHECK(containerd.find("fix: gpu-ctk runtime configure --runtime=containerd --set-as-default "
                        "--config " +
                        node.containerd_toml()) != std::string::npos);

  // Docker's containerd.io package turns the CRI plugin off: said as that, not as a runtime to
  // register (configuring the runtime again would not change it).
  // (In a version 2 file by its full name; the package's version 1 file says "cri".)
  gcr::test::write_file(node.containerd_toml(),
                        "disabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n" +
                            gcr::test::read_file(node.containerd_toml()));
  const auto cri_off = node.doctor();
  const std::string off =
      line_starting(cri_off.out, "FAIL  containerd: its CRI plugin is disabled");
  CHECK_MESSAGE(off.find("fix: remove \"io.containerd.grpc.v1.cri\" from disabled_plugins in " +
                         node.containerd_toml()) != std::string::npos,
                cri_off.out);
  CHECK(line_starting(cri_off.out, "FAIL  containerd: the default runtime") == "");

  // Nothing registered at all.
  gcr::test::write_file(node.docker_json(), "{}\n");
  const auto none = node.doctor({"--engine", "podman"});
  CHECK(line_starting(none.out, "FAIL  docker: gpu-container-runtime is not registered (" +
                                    node.docker_json() + ")") != "");
  CHECK(line_starting(none.out, "ok    podman: 13 CDI devices nvidia.com/gpu=*") != "");
}

TEST_CASE("doctor: our registered runtime whose program cannot be run fails, with the fix") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  // An install that lost its mode: every container through it would fail to start.
  const std::string copy = node.f.path("broken/gpu-container-runtime");
  gcr::test::make_dirs(node.f.path("broken"));
  gcr::test::write_file(copy, gcr::test::read_file(gcr::test::built("gpu-container-runtime")));
  REQUIRE(::chmod(copy.c_str(), 0644) == 0);
  gcr::test::write_file(node.docker_json(),
                        "{\"default-runtime\": \"nvidia\", \"runtimes\": {\"nvidia\": "
                        "{\"path\": \"" +
                            copy + "\"}}}\n");
  const auto r = node.doctor();
  CHECK(r.exit_code == 1);
  const std::string line =
      line_starting(r.out,
                    "FAIL  docker: runtime `nvidia` is gpu-container-runtime, but its "
                    "program cannot be run: no execute permission (" +
                        copy + "): every container through it fails to start");
  CHECK_MESSAGE(line.find("fix: chmod 755 " + copy) != std::string::npos, r.out);
  CHECK(line_starting(r.out, "ok    docker: runtime `nvidia`") == "");
  REQUIRE(::chmod(copy.c_str(), 0755) == 0);
  CHECK(line_starting(node.doctor().out,
                      "ok    docker: runtime `nvidia` is gpu-container-runtime") != "");
}

TEST_CASE("doctor: CRI-O's drop-ins, and podman without a CDI spec") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.configure();
  const std::string crio = node.f.path("crio/crio.conf");
  gcr::test::write_file(crio, "[crio.runtime]\ndefault_runtime = \"runc\"\n");
  const std::vector<std::string> engines{"doctor", "--engine",      "crio", "--engine",
                                         "podman", "--crio-config", crio};
  auto r = node.ctk(engines);
  CHECK(r.exit_code == 1);
  CHECK(line_starting(r.out, "FAIL  crio: gpu-container-runtime is not registered") != "");
  CHECK(line_starting(r.out, "warn  podman: no CDI device nvidia.com/gpu=*") != "");
  node.register_engine("crio", crio, false);
  r = node.ctk(engines);
  CHECK(line_starting(r.out, "FAIL  crio: the default runtime is `runc`, not `nvidia`") != "");
  node.register_engine("crio", crio, true);
  r = node.ctk(engines);
  CHECK(line_starting(r.out, "ok    crio: `nvidia` is the default runtime") != "");
  CHECK(line_starting(r.out, "FAIL  crio") == "");
}

TEST_CASE("doctor: containerd's SystemdCgroup against the kubelet's cgroupDriver") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  gcr::test::write_file(node.kubelet_yaml(),
                        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
                        "cgroupDriver: systemd\n");
  const auto r = node.doctor();
  CHECK(r.exit_code == 1);
  const std::string line = line_starting(r.out,
                                         "FAIL  containerd: runtime `nvidia` has "
                                         "SystemdCgroup = false but the kubelet's "
                                         "cgroupDriver is systemd");
  CHECK(line.find(node.kubelet_yaml()) != std::string::npos);
  CHECK(line.find("fix: SystemdCgroup = true in [plugins.\"io.containerd.grpc.v1.cri\"."
                  "containerd.runtimes.nvidia.options]") != std::string::npos);

  gcr::test::write_file(node.kubelet_yaml(), "kind: KubeletConfiguration\n");  // cgroupfs
  const auto agreed = node.doctor();
  CHECK(agreed.exit_code == 0);
  CHECK(line_starting(agreed.out,
                      "ok    containerd: SystemdCgroup = false agrees with the "
                      "kubelet's cgroupDriver cgroupfs") != "");
}

TEST_CASE("doctor: a CDI spec left from another driver, and one a user could have written") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const std::string spec = node.f.path("cdi/nvidia.yaml");
  std::string text = gcr::test::read_file(spec);
  const std::string v = gcr::test::SimHost::version();
  for (auto at = text.find(v); at != std::string::npos; at = text.find(v, at))
    text.replace(at, v.size(), "535.104.05");
  gcr::test::write_file(spec, text);
  auto r = node.doctor();
  CHECK(r.exit_code == 1);
  const std::string stale = line_starting(
      r.out, "FAIL  cdi: stale spec: made for driver 535.104.05, " + v + " is loaded");
  CHECK(stale.find("fix: gpu-ctk cdi generate --output " + spec) != std::string::npos);

  // A stale management spec is written again in its own mode: a plain generate at its path
  // would define nvidia.com/gpu twice.
  const std::string management = node.f.path("cdi/management.nvidia.yaml");
  REQUIRE(node.ctk({"cdi", "generate", "--mode", "management", "--output", management}).exit_code ==
          0);
  text = gcr::test::read_file(management);
  for (auto at = text.find(v); at != std::string::npos; at = text.find(v, at))
    text.replace(at, v.size(), "535.104.05");
  gcr::test::write_file(management, text);
  r = node.doctor();
  CHECK(r.out.find("(" + management + "); fix: gpu-ctk cdi generate --mode management --output " +
                   management + "\n") != std::string::npos);

  REQUIRE(::chmod(spec.c_str(), 0666) == 0);
  r = node.doctor();
  CHECK(line_starting(r.out, "FAIL  cdi: a spec is refused: ").find(spec) != std::string::npos);
}

TEST_CASE("doctor: a CDI spec naming a file the driver no longer has; regenerating fixes it") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const std::string spec = node.f.path("cdi/nvidia.yaml");
  const std::string firmware = node.f.host().driver_root() + "/lib/firmware/nvidia/" +
                               gcr::test::SimHost::version() + "/gsp_ga10x.bin";
  REQUIRE(gcr::test::read_file(spec).find(firmware) != std::string::npos);
  REQUIRE(::unlink(firmware.c_str()) == 0);
  auto r = node.doctor();
  CHECK(r.exit_code == 1);
  CHECK(line_starting(r.out, "FAIL  cdi: stale spec: it names " + firmware +
                                 ", which does not exist (" + spec +
                                 "); fix: gpu-ctk cdi generate --output " + spec) != "");
  const auto fixed = node.ctk({"cdi", "generate", "--output", spec});
  REQUIRE_MESSAGE(fixed.exit_code == 0, fixed.err);
  r = node.doctor();
  CHECK(r.exit_code == 0);
  CHECK(line_starting(r.out, "ok    cdi: nvidia.com/gpu: ") != "");
}

// The plugin's cdi strategies hand out <default-kind>=<uuid|index>: a spec written with another
// --device-name-strategy (or before the GPUs changed) leaves pods with unresolvable devices.
TEST_CASE("doctor: device-list cdi-annotations and a spec without the names the plugin gives") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  node.configure({{"device-plugin", {{"device-list", {"cdi-annotations"}}}}});
  auto r = node.doctor();
  CHECK(line_starting(r.out,
                      "ok    cdi: every GPU the device plugin hands out is a device of a "
                      "spec (") != "");
  const std::string spec = node.f.path("cdi/nvidia.yaml");
  REQUIRE(node.ctk({"cdi", "generate", "--device-name-strategy", "index", "--output", spec})
              .exit_code == 0);
  r = node.doctor();
  CHECK(r.exit_code == 1);
  const std::string failed = line_starting(r.out, "FAIL  cdi: no spec defines nvidia.com/gpu=GPU-");
  CHECK(failed.find(", which the device plugin hands out: pods given it fail to start "
                    "(unresolvable CDI devices)") != std::string::npos);
  CHECK(failed.find("fix: gpu-ctk cdi generate --output " + spec +
                    ", after every change of GPUs") != std::string::npos);
  node.configure({{"device-plugin", {{"device-list", {"cdi-cri"}}, {"device-ids", "index"}}}});
  r = node.doctor();
  CHECK(line_starting(r.out,
                      "ok    cdi: every GPU the device plugin hands out is a device of a "
                      "spec (") != "");
}

TEST_CASE("doctor: on cgroup v2, NVIDIA nodes without their /dev/char links fail") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const std::string dev_root = node.f.host().dev_root();
  const std::string links = dev_root + "/dev/char";
  auto r = node.doctor();  // cgroup v1 (the dev root has no sys/fs/cgroup): not checked
  CHECK(r.exit_code == 0);
  CHECK(r.out.find("/dev/char") == std::string::npos);

  gcr::test::write_file(dev_root + "/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory\n");
  r = node.doctor();
  CHECK(r.exit_code == 1);
  const std::string unlinked = line_starting(r.out, "FAIL  driver: cgroup v2: ");
  CHECK_MESSAGE(unlinked.find(" NVIDIA device nodes have no /dev/char link (") != std::string::npos,
                r.out);
  CHECK(unlinked.find("`systemctl daemon-reload` takes them from running containers (" + links +
                      "); fix: gpu-ctk system create-dev-char-symlinks") != std::string::npos);

  const auto made = node.ctk({"system", "create-dev-char-symlinks"});
  REQUIRE_MESSAGE(made.exit_code == 0, made.err);
  r = node.doctor();
  CHECK(r.exit_code == 0);
  CHECK(line_starting(r.out, "ok    driver: cgroup v2: the ")
            .find(" NVIDIA device nodes have their /dev/char links (" + links + ")") !=
        std::string::npos);

  REQUIRE(::unlink((links + "/195:255").c_str()) == 0);
  gcr::test::make_symlink("../nvidia-modeset", links + "/195:255");  // another device
  r = node.doctor();
  CHECK(r.exit_code == 1);
  CHECK(line_starting(r.out, "FAIL  driver: cgroup v2: 1 of the ")
            .find(" NVIDIA device nodes have no /dev/char link (195:255 for " +
                  std::filesystem::canonical(dev_root + "/dev").string() + "/nvidiactl)") !=
        std::string::npos);
}

TEST_CASE(
    "doctor: imex-channel: the node's channel 0, and its CDI name where the plugin hands one") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  node.configure({{"device-plugin", {{"imex-channel", "auto"}}}});
  auto r = node.doctor();
  CHECK(line_starting(r.out, "ok    kubernetes: pods given GPUs get IMEX channel 0 (") != "");
  // With a CDI strategy the plugin names nvidia.com/imex-channel=0: a spec must define it.
  node.configure(
      {{"device-plugin", {{"imex-channel", "auto"}, {"device-list", {"cdi-annotations"}}}}});
  REQUIRE(node.ctk({"cdi", "generate", "--output", node.f.path("cdi/nvidia.yaml")}).exit_code == 0);
  r = node.doctor();
  CHECK(r.exit_code == 1);
  const std::string missing = line_starting(r.out,
                                            "FAIL  cdi: no spec defines nvidia.com/imex-channel=0, "
                                            "which the device plugin hands out with the GPUs");
  CHECK(missing.find("fix: gpu-ctk cdi generate --mode imex --output "
                     "/var/run/cdi/nvidia-imex.yaml") != std::string::npos);
  const std::string imex = node.f.path("cdi/nvidia-imex.yaml");
  REQUIRE(node.ctk({"cdi", "generate", "--mode", "imex", "--output", imex}).exit_code == 0);
  r = node.doctor();
  CHECK(line_starting(r.out,
                      "ok    cdi: the IMEX channel the device plugin hands out is a "
                      "device of a spec") != "");
  CHECK(line_starting(r.out, "ok    cdi: nvidia.com/imex-channel: 3 devices") != "");
  // Another vendor's name: gpu-cdi-refresh writes nvidia.com's, so the fix names the vendor.
  node.configure({{"device-plugin", {{"imex-channel", "auto"}, {"device-list", {"cdi-cri"}}}},
                  {"cdi", {{"default-kind", "example.com/gpu"}}}});
  r = node.doctor();
  CHECK(line_starting(r.out, "FAIL  cdi: no spec defines example.com/imex-channel=0, ")
            .find("fix: gpu-ctk cdi generate --mode imex --vendor example.com --output "
                  "/var/run/cdi/nvidia-imex.yaml (gpu-cdi-refresh writes nvidia.com's") !=
        std::string::npos);
  // enabled without the channel: every pod given GPUs is refused.
  const std::string channel = node.f.host().dev_root() + "/dev/nvidia-caps-imex-channels/channel0";
  REQUIRE(::rename(channel.c_str(), (channel + ".away").c_str()) == 0);
  node.configure({{"device-plugin", {{"imex-channel", "enabled"}}}});
  r = node.doctor();
  CHECK(r.exit_code == 1);
  CHECK(line_starting(r.out,
                      "FAIL  kubernetes: imex-channel = enabled, but this node has no "
                      "IMEX channel 0: pods given GPUs are refused (no character device (" +
                          channel + "))") != "");
  node.configure({{"device-plugin", {{"imex-channel", "auto"}}}});
  r = node.doctor();
  CHECK(line_starting(r.out,
                      "ok    kubernetes: no IMEX channel 0 on this node, so pods get none") != "");
  // A spec of IMEX channels (of another class here) names channel 0, which is gone: written
  // again in its mode and class while the node has a channel, removed once it has none (--mode
  // imex would fail).
  REQUIRE(::rename((channel + ".away").c_str(), channel.c_str()) == 0);
  REQUIRE(node.ctk({"cdi", "generate", "--mode", "imex", "--class", "channel", "--output", imex})
              .exit_code == 0);
  REQUIRE(::rename(channel.c_str(), (channel + ".away").c_str()) == 0);
  r = node.doctor();
  CHECK(line_starting(r.out, "FAIL  cdi: stale spec: it names " + channel)
            .find("fix: gpu-ctk cdi generate --mode imex --class channel --output " + imex) !=
        std::string::npos);
  const std::string channels = node.f.host().dev_root() + "/dev/nvidia-caps-imex-channels";
  REQUIRE(::rename(channels.c_str(), (channels + ".away").c_str()) == 0);
  r = node.doctor();
  CHECK(line_starting(r.out, "FAIL  cdi: stale spec: it names ")
            .find("fix: rm " + imex + " (this node has no IMEX channel now") != std::string::npos);
}

TEST_CASE("doctor: device-list strategies the runtime's [requests] refuse") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  node.configure({{"device-plugin", {{"device-list", {"volume-mounts"}}}}});
  auto r = node.doctor();
  CHECK(r.exit_code == 1);
  CHECK(line_starting(r.out,
                      "FAIL  kubernetes: device-list volume-mounts, but "
                      "accept-volume-mounts = false: pods get no GPU") != "");
  node.configure({{"device-plugin", {{"device-list", {"envvar"}}}},
                  {"requests", {{"accept-env-when-unprivileged", false}}}});
  r = node.doctor();
  CHECK(line_starting(r.out,
                      "FAIL  kubernetes: device-list envvar, but "
                      "accept-env-when-unprivileged = false") != "");
  node.configure({{"device-plugin", {{"device-list", {"cdi-annotations"}}}},
                  {"requests", {{"annotation-prefixes", {"example.com/"}}}}});
  r = node.doctor();
  CHECK(line_starting(r.out,
                      "FAIL  kubernetes: device-list cdi-annotations, but "
                      "annotation-prefixes leaves out cdi.k8s.io/") != "");
  // A prefix narrower than cdi.k8s.io/ that still takes the plugin's key is fine.
  node.configure({{"device-plugin", {{"device-list", {"cdi-annotations"}}}},
                  {"requests", {{"annotation-prefixes", {"cdi.k8s.io/gpu-device-plugin_"}}}}});
  r = node.doctor();
  CHECK(line_starting(r.out,
                      "ok    kubernetes: the runtime accepts what the device plugin hands "
                      "out") != "");
  node.configure({{"device-plugin", {{"device-list", {"volume-mounts"}}}},
                  {"requests", {{"accept-volume-mounts", true}}}});
  r = node.doctor();
  CHECK(r.exit_code == 0);
}

TEST_CASE("doctor: device-list cdi-cri on a kubelet or containerd that drops CDI devices") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  node.bin_dir = node.f.path("node-bin");
  const auto kubelet = [&](const std::string& version) {
    gcr::test::write_file(node.bin_dir + "/kubelet",
                          "#!/bin/sh\necho 'Kubernetes v" + version + "'\n", 0755);
  };
  node.configure({{"device-plugin", {{"device-list", {"cdi-cri"}}}}});
  kubelet("1.20.2");
  auto r = node.doctor();
  CHECK(r.exit_code == 1);
  CHECK(line_starting(r.out,
                      "FAIL  kubernetes: device-list cdi-cri, but kubelet 1.20 has no CDI device "
                      "field (it came in 1.28): pods get no GPU") != "");
  kubelet("1.28.3");
  gcr::test::write_file(node.kubelet_yaml(), "kind: KubeletConfiguration\n");
  r = node.doctor();
  CHECK(line_starting(r.out,
                      "FAIL  kubernetes: device-list cdi-cri, but kubelet 1.28 passes CDI devices "
                      "only with the DevicePluginCDIDevices feature gate") != "");
  gcr::test::write_file(node.kubelet_yaml(),
                        "kind: KubeletConfiguration\nfeatureGates:\n  DevicePluginCDIDevices: "
                        "true\n");
  r = node.doctor();
  // Debian 12's containerd is 1.6: the kubelet passes the names on, containerd drops them.
  const auto containerd = gcr::test::run({"/usr/bin/containerd", "--version"});
  REQUIRE(containerd.out.find(" 1.6.") != std::string::npos);
  CHECK(line_starting(r.out,
                      "FAIL  kubernetes: device-list cdi-cri, but containerd 1.6 does not apply "
                      "CDI devices (1.7 does, with enable_cdi = true): pods get no GPU") != "");
  CHECK(r.exit_code == 1);
  // The containerd of Debian 13 (1.7) and sid (2.1) first in PATH: they apply CDI devices.
  for (const char* suite : {"trixie", "sid"}) {
    CAPTURE(suite);
    gcr::test::make_symlink(gcr::test::newer_engines() + "/" + suite + "/root/usr/bin/containerd",
                            node.bin_dir + "/containerd");
    r = node.doctor();
    CHECK(line_starting(r.out,
                        "ok    kubernetes: the runtime accepts what the device plugin "
                        "hands out") != "");
    CHECK(r.out.find("cdi-cri, but") == std::string::npos);
    std::filesystem::remove(node.bin_dir + "/containerd");
  }
  // Where the plugin hands out annotations as well, they are what the runtime reads.
  node.configure({{"device-plugin", {{"device-list", {"cdi-annotations"}}}}});
  r = node.doctor();
  CHECK(line_starting(
            r.out, "ok    kubernetes: the runtime accepts what the device plugin hands out") != "");
}

TEST_CASE("doctor: the kubelet directory: sockets that answer, and ones that do not") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const std::string dir = node.f.path("kubelet/device-plugins");
  gcr::test::make_dirs(dir);
  auto r = node.doctor();
  CHECK(r.exit_code == 1);
  CHECK(line_starting(r.out, "FAIL  kubernetes: the kubelet does not answer") != "");
  CHECK(line_starting(r.out,
                      "FAIL  kubernetes: no device plugin answers: the node advertises no "
                      "nvidia.com/gpu") != "");
  const gcr::test::ListeningSocket kubelet(dir + "/kubelet.sock");
  const gcr::test::ListeningSocket plugin(dir + "/" + gcr::plugin_socket_name("nvidia.com/gpu"));
  r = node.doctor();
  CHECK(r.exit_code == 0);
  CHECK(line_starting(r.out, "ok    kubernetes: the kubelet answers") != "");
  CHECK(line_starting(r.out, "ok    kubernetes: gpu-device-plugin serves nvidia.com/gpu") != "");
}

TEST_CASE("doctor --json: every check with its level, area, message, evidence and fix") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  node.configure({{"device-plugin", {{"device-list", {"volume-mounts"}}}}});
  const auto r = node.doctor({"--json"});
  CHECK(r.exit_code == 1);
  const Json doc = Json::parse(r.out);
  CHECK(doc.at("ok") == false);
  const auto text = node.doctor();
  REQUIRE(doc.at("checks").size() == lines_of(text.out).size());
  bool found = false;
  for (const auto& c : doc.at("checks")) {
    CHECK(c.size() == 5);
    CHECK((c.at("level") == "ok" || c.at("level") == "warn" || c.at("level") == "fail"));
    if (c.at("area") == "kubernetes" && c.at("level") == "fail") {
      found = true;
      CHECK(c.at("message") ==
            "device-list volume-mounts, but accept-volume-mounts = false: pods get no GPU");
      CHECK(c.at("evidence") ==
            "[device-plugin] device-list = [volume-mounts] in " + node.f.config_path());
      CHECK(c.at("fix") == "accept-volume-mounts = true in [requests]");
    }
  }
  CHECK(found);
}

TEST_CASE("doctor --run: CUDA through the shim and runc in a container per GPU") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const auto r = node.doctor({"--run"});
  CHECK_MESSAGE(r.exit_code == 0, r.out);
  // The stand-in libcuda counts the GPU nodes the container sees and runs the probe's kernel as
  // a real driver would: each container saw exactly its GPU, and every step passed.
  for (const auto& gpu : node.f.host().gpus()) {
    const std::string at = "ok    run: GPU " + std::to_string(gpu.index) + ": ";
    CAPTURE(at);
    CHECK(line_starting(r.out, at + "libcuda: loaded, CUDA 12.4, 1 device (") != "");
    CHECK(line_starting(r.out, at + "device: NVIDIA A100-SXM4-40GB, 108 SMs, 40960 MiB (") != "");
    CHECK(line_starting(r.out, at + "ptx: the kernel compiled just in time (") != "");
    CHECK(line_starting(r.out, at + "kernel: 4096 results checked (") != "");
    CHECK(line_starting(r.out, at + "memory: allocated 256 MiB; 40960 of 40960 MiB free (") != "");
  }
  CHECK(not_ok(r.out).empty());
}

TEST_CASE("doctor --run GPU...: only the GPUs named; one that is not there fails with the reason") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  const std::string uuid = node.f.host().gpus().at(2).uuid;
  const auto named = node.doctor({"--run", uuid});
  CHECK_MESSAGE(named.exit_code == 0, named.out);
  CHECK(line_starting(named.out, "ok    run: GPU " + uuid + ": kernel: 4096 results checked") !=
        "");
  CHECK(line_starting(named.out, "ok    run: GPU 0: ") == "");
  const auto missing = node.doctor({"--run", "7"});
  CHECK(missing.exit_code == 1);
  const std::string failed =
      line_starting(missing.out, "FAIL  run: GPU 7: the test container failed:");
  CHECK_MESSAGE(failed.find("7") != std::string::npos, missing.out);
  const auto refused = node.ctk({"doctor", "0"});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err == "gpu-ctk doctor: GPUs are named only with --run\n");
}

TEST_CASE("doctor --run on a host without GPUs says so and fails") {
  REQUIRE(gcr::test::is_root());
  DoctorNode node;
  node.make_healthy();
  std::filesystem::remove_all(node.f.host().dev_root() + "/proc/driver/nvidia/gpus");
  const auto r = node.doctor({"--run"});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(
      line_starting(r.out, "FAIL  run: no NVIDIA GPU on this host: nothing to run on (") != "",
      r.out);
}
