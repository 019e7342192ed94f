// gather_edits and apply_gathered_edits on an in-memory host (VirtualHost): which devices,
// mounts and hooks a request gets, what discovery refuses, and what a missing node does.
#include <doctest/doctest.h>

#include <algorithm>

#include "driver/host.h"
#include "injection/gpu_injection.h"
#include "test_support.h"
#include "virtual_host.h"

namespace {

using gcr::test::VirtualHost;

const std::string kHostVersion = "550.54.15";
const std::string kLibDir = "/usr/lib/x86_64-linux-gnu";
const gcr::Config::Driver kHostRoots{"/driver", "/devroot"};

std::string gpu_information(const std::string& bus, unsigned minor) {
  return "Model: \t\t NVIDIA A100\nGPU UUID: \t GPU-0000000" + std::to_string(minor) +
         "-0000-0000-0000-000000000000\nBus Location: \t " + bus + "\nDevice Minor: \t " +
         std::to_string(minor) + "\n";
}

// Two GPUs (minors 0 and 1, in bus order), the control and UVM nodes, libcuda and NVML, a
// libnvidia-ptxjitcompiler someone other than root owns, nvidia-smi, and gpu-ctk for the hooks.
void make_gpu_host(VirtualHost& host) {
  host.add_file("/devroot/proc/driver/nvidia/version",
                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + kHostVersion +
                    "  Thu Feb 22 01:44:30 UTC 2024\n");
  host.add_file("/devroot/proc/driver/nvidia/gpus/0000:17:00.0/information",
                gpu_information("0000:17:00.0", 0));
  host.add_file("/devroot/proc/driver/nvidia/gpus/0000:65:00.0/information",
                gpu_information("0000:65:00.0", 1));
  host.add_file("/devroot/proc/driver/nvidia/params", "ModifyDeviceFiles: 1\n");
  host.add_file("/devroot/proc/devices", "Character devices:\n195 nvidia\n510 nvidia-uvm\n");
  host.add_char_device("/devroot/dev/nvidia0", 195, 0);
  host.add_char_device("/devroot/dev/nvidia1", 195, 1);
  host.add_char_device("/devroot/dev/nvidiactl", 195, 255);
  host.add_char_device("/devroot/dev/nvidia-uvm", 510, 0);
  host.add_char_device("/devroot/dev/nvidia-uvm-tools", 510, 1);
  const std::string libs = "/driver" + kLibDir + "/";
  host.add_file(libs + "libcuda.so." + kHostVersion, gcr::test::elf64_header(), 0755);
  host.add_file(libs + "libnvidia-ml.so." + kHostVersion, gcr::test::elf64_header(), 0755);
  host.add_file(libs + "libnvidia-ptxjitcompiler.so." + kHostVersion, gcr::test::elf64_header(),
                0755, 1000);
  host.add_file("/driver/usr/bin/nvidia-smi", gcr::test::elf64_header(), 0755);
  host.add_file("/usr/bin/gpu-ctk", gcr::test::elf64_header(), 0755);
}

struct Fakes : gcr::DriverProbe, gcr::CdiResolver {
  gcr::Result<std::optional<std::string>> cuda_version(const std::string&) override {
    return std::optional<std::string>();
  }
  gcr::Result<std::map<std::string, gcr::GpuFacts>> gpu_facts() override {
    return std::map<std::string, gcr::GpuFacts>();
  }
  gcr::Result<gcr::ContainerEdits> resolve(const std::vector<std::string>&) override {
    if (cdi_edits) return *cdi_edits;
    return gcr::Error{"no CDI in these tests"};
  }
  std::optional<gcr::ContainerEdits> cdi_edits;  // what every CDI name resolves to
};

// GPU 1 with utility and compute, as NVIDIA_VISIBLE_DEVICES=1 asks.
gcr::GpuRequest gpu_one() {
  gcr::GpuRequest request;
  request.device_ids = {"1"};
  request.capabilities.add(gcr::Capability::kUtility);
  request.capabilities.add(gcr::Capability::kCompute);
  return request;
}

// A request resolved against `fs`: the edits or the error, and what was logged.
struct Gathered {
  gcr::Result<gcr::GatheredEdits> edits;
  std::optional<std::string> ptxjit_refusal;
  std::string log;
};

Gathered gather(VirtualHost& fs, const gcr::GpuRequest& request,
                const std::optional<gcr::ContainerEdits>& cdi_edits = std::nullopt) {
  gcr::test::TempDir dir;
  gcr::Logger logger("test");
  logger.set_log_file(dir / "log");
  gcr::DriverHost host(kHostRoots, fs.node_stat(), fs, fs);
  Fakes fakes;
  fakes.cdi_edits = cdi_edits;
  const gcr::NodeStatFn stat = fs.node_stat();
  const gcr::Config config;
  const gcr::InjectionSources sources{host, fakes, fakes, stat, fs, logger};
  auto edits = gcr::gather_edits(request, config, sources);
  const std::string log =
      std::filesystem::exists(dir / "log") ? gcr::test::read_file(dir / "log") : "";
  return {std::move(edits), host.files().refusal("libnvidia-ptxjitcompiler.so"), log};
}

std::vector<std::string> device_paths(const gcr::ContainerEdits& edits) {
  std::vector<std::string> out;
  for (const auto& node : edits.device_nodes) out.push_back(node.path + " <- " + node.host_path);
  return out;
}

std::vector<std::string> mount_paths(const gcr::ContainerEdits& edits) {
  std::vector<std::string> out;
  for (const auto& m : edits.mounts) out.push_back(m.container_path + " <- " + m.host_path);
  return out;
}

bool has_arg(const gcr::Hook& hook, const std::string& arg) {
  return std::find(hook.args.begin(), hook.args.end(), arg) != hook.args.end();
}

}  // namespace

TEST_CASE("gather_edits: the asked GPU's node, the control nodes, the driver's files and hooks") {
  VirtualHost fs;
  make_gpu_host(fs);
  auto gathered = gather(fs, gpu_one());
  REQUIRE_MESSAGE(gathered.edits.ok(), gathered.edits.error().message);
  const auto& edits = gathered.edits->edits;
  CHECK(device_paths(edits) ==
        std::vector<std::string>{"/dev/nvidiactl <- /devroot/dev/nvidiactl",
                                 "/dev/nvidia-uvm <- /devroot/dev/nvidia-uvm",
                                 "/dev/nvidia-uvm-tools <- /devroot/dev/nvidia-uvm-tools",
                                 "/dev/nvidia1 <- /devroot/dev/nvidia1"});
  CHECK(edits.device_nodes.back().major == 195);
  CHECK(edits.device_nodes.back().minor == 1);
  const std::string libs = "/driver" + kLibDir + "/";
  CHECK(mount_paths(edits) ==
        std::vector<std::string>{
            kLibDir + "/libcuda.so." + kHostVersion + " <- " + libs + "libcuda.so." + kHostVersion,
            kLibDir + "/libnvidia-ml.so." + kHostVersion + " <- " + libs + "libnvidia-ml.so." +
                kHostVersion,
            "/usr/bin/nvidia-smi <- /driver/usr/bin/nvidia-smi"});
  CHECK(edits.mounts.front().options ==
        std::vector<std::string>{"ro", "nosuid", "nodev", "rbind", "rprivate"});
  // The links and the loader cache travel as a request, not a hook: the shim does the work at
  // create, or writes the hook when it cannot.
  const auto& libraries = gathered.edits->libraries;
  REQUIRE(libraries.has_value());
  CHECK(libraries->folders == std::vector<std::string>{kLibDir});
  CHECK(libraries->links == std::vector<std::string>{"libcuda.so.1::" + kLibDir + "/libcuda.so"});
  REQUIRE(edits.hooks.size() == 1);
  CHECK(has_arg(edits.hooks[0], "disable-device-node-modification"));
  // As its hook (what cdi generate writes, and the shim when it leaves the work to the hook):
  // first, before the device-node one.
  const auto hooked = gcr::with_libraries_hook(*gathered.edits, gcr::Config().hooks);
  REQUIRE(hooked.hooks.size() == 2);
  CHECK(has_arg(hooked.hooks[0], "update-libraries"));
  CHECK(has_arg(hooked.hooks[0], kLibDir));
  CHECK(has_arg(hooked.hooks[0], "libcuda.so.1::" + kLibDir + "/libcuda.so"));
  CHECK(has_arg(hooked.hooks[1], "disable-device-node-modification"));
}

// The node a request for `ids` gets, or its error.
std::string gpu_node_for(VirtualHost& fs, std::vector<std::string> ids) {
  gcr::GpuRequest request = gpu_one();
  request.device_ids = std::move(ids);
  auto gathered = gather(fs, request);
  if (!gathered.edits.ok()) return gathered.edits.error().message;
  return device_paths(gathered.edits->edits).back();
}

TEST_CASE("gather_edits: a GPU named by index or bus id needs its own information file alone") {
  VirtualHost fs;
  make_gpu_host(fs);
  const std::string broken = "/devroot/proc/driver/nvidia/gpus/0000:b3:00.0/information";
  fs.add_file(broken, "Model: \t\t NVIDIA A100\n");
  CHECK(gpu_node_for(fs, {"1"}) == "/dev/nvidia1 <- /devroot/dev/nvidia1");
  CHECK(gpu_node_for(fs, {"0000:65:00.0"}) == "/dev/nvidia1 <- /devroot/dev/nvidia1");
  // A UUID is looked for in every GPU's file; the broken one is named.
  const std::string why =
      "cannot read GPU information: missing GPU UUID, Bus Location or "
      "Device Minor (" +
      broken + ")";
  CHECK(gpu_node_for(fs, {"GPU-00000001-0000-0000-0000-000000000000"}).find(why) !=
        std::string::npos);
  CHECK(gpu_node_for(fs, {"2"}).find(why) != std::string::npos);
  CHECK(gpu_node_for(fs, {"3"}).find("unknown GPU `3`: this host has GPUs 0-2") !=
        std::string::npos);
}

TEST_CASE("gather_edits: GPU entries not named by their bus are ordered by the buses they give") {
  VirtualHost fs;
  make_gpu_host(fs);
  fs.remove("/devroot/proc/driver/nvidia/gpus/0000:17:00.0/information");
  fs.remove("/devroot/proc/driver/nvidia/gpus/0000:65:00.0/information");
  // The entry named first gives the later bus: GPU 0 is the other one.
  fs.add_file("/devroot/proc/driver/nvidia/gpus/0000:17:00.0/information",
              gpu_information("0000:65:00.0", 1));
  fs.add_file("/devroot/proc/driver/nvidia/gpus/0000:65:00.0/information",
              gpu_information("0000:17:00.0", 0));
  CHECK(gpu_node_for(fs, {"0"}) == "/dev/nvidia0 <- /devroot/dev/nvidia0");
  CHECK(gpu_node_for(fs, {"1"}) == "/dev/nvidia1 <- /devroot/dev/nvidia1");
  VirtualHost named;
  make_gpu_host(named);
  named.remove("/devroot/proc/driver/nvidia/gpus/0000:65:00.0/information");
  named.remove("/devroot/proc/driver/nvidia/gpus/0000:65:00.0");
  named.add_file("/devroot/proc/driver/nvidia/gpus/second/information",
                 gpu_information("0000:65:00.0", 1));
  CHECK(gpu_node_for(named, {"1"}) == "/dev/nvidia1 <- /devroot/dev/nvidia1");
  CHECK(gpu_node_for(named, {"0000:65:00.0"}) == "/dev/nvidia1 <- /devroot/dev/nvidia1");
}

TEST_CASE("gather_edits: a misnamed GPU entry met midway: every ID chosen from the whole table") {
  VirtualHost fs;
  make_gpu_host(fs);
  // Entry b3's file gives bus 05: in bus order the GPUs are 05 (minor 2), 17 (0) and 65 (1).
  fs.add_file("/devroot/proc/driver/nvidia/gpus/0000:b3:00.0/information",
              gpu_information("0000:05:00.0", 2));
  fs.add_char_device("/devroot/dev/nvidia2", 195, 2);
  gcr::GpuRequest request = gpu_one();
  request.device_ids = {"1", "2"};
  auto gathered = gather(fs, request);
  REQUIRE_MESSAGE(gathered.edits.ok(), gathered.edits.error().message);
  const auto nodes = device_paths(gathered.edits->edits);
  CHECK(std::vector<std::string>(nodes.end() - 2, nodes.end()) ==
        std::vector<std::string>{"/dev/nvidia0 <- /devroot/dev/nvidia0",
                                 "/dev/nvidia1 <- /devroot/dev/nvidia1"});
  // No GPU's file gives bus b3.
  CHECK(gpu_node_for(fs, {"0000:b3:00.0"}).find("unknown GPU `0000:b3:00.0`") != std::string::npos);
  CHECK(gpu_node_for(fs, {"0000:05:00.0"}) == "/dev/nvidia2 <- /devroot/dev/nvidia2");
}

TEST_CASE("gather_edits: a library root does not own is refused, said, and not mounted") {
  VirtualHost fs;
  make_gpu_host(fs);
  auto gathered = gather(fs, gpu_one());
  REQUIRE(gathered.edits.ok());
  const std::string ptxjit = "/driver" + kLibDir + "/libnvidia-ptxjitcompiler.so." + kHostVersion;
  const std::string refusal = "refused " + ptxjit + ": not owned by root (" + ptxjit + ")";
  CHECK(gathered.ptxjit_refusal == refusal);
  CHECK(gathered.log.find(refusal) != std::string::npos);
  for (const auto& mount : gathered.edits->edits.mounts) CHECK(mount.host_path != ptxjit);
}

TEST_CASE("gather_edits: the asked GPU's missing node fails the request, naming it") {
  VirtualHost fs;
  make_gpu_host(fs);
  fs.remove("/devroot/dev/nvidia1");
  auto gathered = gather(fs, gpu_one());
  REQUIRE_FALSE(gathered.edits.ok());
  CHECK(gathered.edits.error().message ==
        "GPU 1: missing device node: No such file or directory (/devroot/dev/nvidia1)");
}

TEST_CASE("gather_edits: a missing optional node is left out and the container warned") {
  VirtualHost fs;
  make_gpu_host(fs);
  fs.add_file("/devroot/proc/devices", "Character devices:\n195 nvidia\n");
  fs.remove("/devroot/dev/nvidia-uvm");
  fs.remove("/devroot/dev/nvidia-uvm-tools");
  auto gathered = gather(fs, gpu_one());
  REQUIRE(gathered.edits.ok());
  CHECK(device_paths(gathered.edits->edits) ==
        std::vector<std::string>{"/dev/nvidiactl <- /devroot/dev/nvidiactl",
                                 "/dev/nvidia1 <- /devroot/dev/nvidia1"});
  CHECK(gathered.log.find("no /devroot/dev/nvidia-uvm (the nvidia-uvm module is not loaded)") !=
        std::string::npos);
}

namespace {

gcr::Result<gcr::EditedSpec> apply_to_bundle_spec(VirtualHost& fs,
                                                  const gcr::GatheredEdits& edits) {
  gcr::DriverHost host(kHostRoots, fs.node_stat(), fs, fs);
  Fakes fakes;
  const gcr::NodeStatFn stat = fs.node_stat();
  const gcr::Config config;
  const gcr::Logger logger("test");
  const gcr::InjectionSources sources{host, fakes, fakes, stat, fs, logger};
  const gcr::Json spec = {{"ociVersion", "1.0.2"},
                          {"process", {{"env", {"NVIDIA_VISIBLE_DEVICES=1"}}}},
                          {"root", {{"path", "rootfs"}}},
                          {"linux", gcr::Json::object()}};
  return gcr::apply_gathered_edits(spec, edits, config, sources);
}

}  // namespace

TEST_CASE("apply_gathered_edits: the gathered devices, mounts and hooks land in the spec") {
  VirtualHost fs;
  make_gpu_host(fs);
  auto gathered = gather(fs, gpu_one());
  REQUIRE(gathered.edits.ok());
  auto edited = apply_to_bundle_spec(fs, *gathered.edits);
  REQUIRE_MESSAGE(edited.ok(), edited.error().message);
  const gcr::Json* spec = &edited->spec;
  std::vector<std::string> devices;
  for (const auto& d : spec->at("linux").at("devices")) devices.push_back(d.at("path"));
  CHECK(devices == std::vector<std::string>{"/dev/nvidiactl", "/dev/nvidia-uvm",
                                            "/dev/nvidia-uvm-tools", "/dev/nvidia1"});
  std::vector<std::string> allowed;
  for (const auto& rule : spec->at("linux").at("resources").at("devices"))
    allowed.push_back(rule.at("type").get<std::string>() + " " +
                      std::to_string(rule.at("major").get<int>()) + ":" +
                      std::to_string(rule.at("minor").get<int>()));
  CHECK(allowed == std::vector<std::string>{"c 195:255", "c 510:0", "c 510:1", "c 195:1"});
  std::vector<std::string> mounts;
  for (const auto& m : spec->at("mounts")) mounts.push_back(m.at("destination"));
  // In the spec, sorted by destination (CDI's order).
  CHECK(mounts == std::vector<std::string>{"/usr/bin/nvidia-smi",
                                           kLibDir + "/libcuda.so." + kHostVersion,
                                           kLibDir + "/libnvidia-ml.so." + kHostVersion});
  // The device-node hook; the libraries hook waits for the loader-cache step, which writes it
  // where the edits' hooks begin only if the shim cannot do the work.
  CHECK(spec->at("hooks").at("createContainer").size() == 1);
  CHECK(edited->first_edit_hook == 0);
}

TEST_CASE("apply_gathered_edits: a hook program root does not own is refused, spec untouched") {
  VirtualHost fs;
  make_gpu_host(fs);
  auto gathered = gather(fs, gpu_one());
  REQUIRE(gathered.edits.ok());
  fs.add_file("/usr/bin/gpu-ctk", gcr::test::elf64_header(), 0755, 1000);
  auto spec = apply_to_bundle_spec(fs, *gathered.edits);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.error().message.find("not owned by root (/usr/bin/gpu-ctk)") != std::string::npos);
}

TEST_CASE("gather_edits: a CDI device with the MIG config or monitor capability is privileged") {
  VirtualHost fs;
  make_gpu_host(fs);
  fs.add_file("/devroot/proc/devices",
              "Character devices:\n195 nvidia\n510 nvidia-uvm\n511 nvidia-caps\n");
  fs.add_file("/devroot/proc/driver/nvidia-caps/mig-minors",
              "config 1\nmonitor 2\ngpu0/gi1/access 12\n");
  fs.add_char_device("/devroot/dev/nvidia-caps/nvidia-cap1", 511, 1);
  fs.add_char_device("/devroot/dev/nvidia-caps/nvidia-cap2", 511, 2);
  fs.add_char_device("/devroot/dev/nvidia-caps/nvidia-cap12", 511, 12);
  const auto with_nodes = [](std::vector<std::pair<std::string, std::string>> nodes) {
    gcr::ContainerEdits edits;
    for (auto& [path, host_path] : nodes)
      edits.device_nodes.push_back(gcr::DeviceNode{path, host_path, "", {}, {}, {}, "", {}, {}});
    return edits;
  };
  gcr::GpuRequest management;
  management.cdi_names = {"management.nvidia.com/gpu=all"};
  const auto all =
      with_nodes({{"/dev/nvidia0", "/devroot/dev/nvidia0"},
                  {"/dev/nvidia-caps/nvidia-cap1", "/devroot/dev/nvidia-caps/nvidia-cap1"},
                  {"/dev/nvidia-caps/nvidia-cap2", "/devroot/dev/nvidia-caps/nvidia-cap2"}});
  const auto refused = gather(fs, management, all);
  REQUIRE_FALSE(refused.edits.ok());
  CHECK(refused.edits.error().message ==
        "NVIDIA_VISIBLE_DEVICES: management.nvidia.com/gpu=all: the MIG config capability "
        "/dev/nvidia-caps/nvidia-cap1 needs a privileged container (CAP_SYS_ADMIN)");
  // Renamed in the container, or given by its numbers: the node is what counts.
  gcr::GpuRequest renamed;
  renamed.cdi_names = {"example.com/x=y"};
  const auto monitor =
      gather(fs, renamed, with_nodes({{"/dev/mon", "/devroot/dev/nvidia-caps/nvidia-cap2"}}));
  REQUIRE_FALSE(monitor.edits.ok());
  CHECK(monitor.edits.error().message.find("the MIG monitor capability /dev/mon needs") !=
        std::string::npos);
  gcr::ContainerEdits numbered = with_nodes({{"/dev/x", "/nowhere"}});
  numbered.device_nodes[0].major = 511;
  numbered.device_nodes[0].minor = 1;
  CHECK_FALSE(gather(fs, renamed, numbered).edits.ok());
  // A GPU instance's own access capability, and any node for a privileged container, pass.
  CHECK(gather(fs, renamed,
               with_nodes(
                   {{"/dev/nvidia-caps/nvidia-cap12", "/devroot/dev/nvidia-caps/nvidia-cap12"}}))
            .edits.ok());
  management.privileged = true;
  CHECK(gather(fs, management, all).edits.ok());
}
