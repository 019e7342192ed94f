// CDI end to end: gpu-ctk cdi generate on the simulated host, validate and list it, then the
// shim resolving names from NVIDIA_VISIBLE_DEVICES, annotations and [requests] mode = "cdi"
// (with the fake runc and with real runc), and podman reading the spec itself. Needs root.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cdi_fixture.h"

using gcr::Json;
using gcr::test::CdiFixture;
using gcr::test::GpuFixture;

namespace {

using gcr::test::require_root;

// The NVML stub's MIG devices of the GPU on bus 3b (index 1, /dev/nvidia0): 1:0 is GPU instance
// 1 / compute instance 0 (capabilities 12 and 13), 1:1 is GPU instance 2 / compute instance 0
// (capabilities 21 and 22).
const std::string kMig0 = "MIG-5eed003b-0000-4000-8000-000000000000";
const std::string kMig1 = "MIG-5eed003b-0000-4000-8000-000000000001";

std::vector<std::string> device_names(const Json& doc) {
  std::vector<std::string> names;
  for (const auto& device : doc["devices"]) names.push_back(device["name"]);
  return names;
}

// The device of that name; null when there is none.
Json device_named(const Json& doc, const std::string& name) {
  for (const auto& device : doc["devices"]) {
    if (device["name"] == name) return device;
  }
  return nullptr;
}

// The container paths of a device's nodes.
std::vector<std::string> node_paths(const Json& device) {
  std::vector<std::string> paths;
  for (const auto& node : device["containerEdits"]["deviceNodes"]) paths.push_back(node["path"]);
  return paths;
}

}  // namespace

TEST_CASE("gpu-ctk cdi generate: a valid spec naming every GPU by index and UUID, plus all") {
  require_root();
  CdiFixture f;
  const auto list = f.ctk({"cdi", "list"});
  CHECK(list.exit_code == 0);
  CHECK(list.err == "");
  for (const auto& gpu : f.host().gpus()) {
    CHECK(list.out.find("nvidia.com/gpu=" + std::to_string(gpu.index) + "\n") != std::string::npos);
    CHECK(list.out.find("nvidia.com/gpu=" + gpu.uuid + "\n") != std::string::npos);
  }
  CHECK(list.out.find("nvidia.com/gpu=all\n") != std::string::npos);
  const auto validate = f.ctk({"cdi", "validate", f.spec_dir + "/nvidia.yaml"});
  CHECK(validate.exit_code == 0);
  CHECK(validate.out == f.spec_dir + "/nvidia.yaml: ok\n");
  // A file named is checked for what it says, whoever owns it (a spec being written in a home
  // folder); the spec folders, read as the runtime reads them, are checked with their owners.
  const std::string mine = f.path("mine.yaml");
  gcr::test::write_file(mine, gcr::test::read_file(f.spec_dir + "/nvidia.yaml"));
  REQUIRE(::chown(mine.c_str(), 1000, 1000) == 0);
  CHECK(f.ctk({"cdi", "validate", mine}).out == mine + ": ok\n");
  const auto json =
      f.ctk({"cdi", "generate", "--format", "json", "--vendor", "example.com", "--class", "accel"});
  const Json doc = Json::parse(json.out);
  CHECK(doc["cdiVersion"] == "0.5.0");
  CHECK(doc["kind"] == "example.com/accel");
  const Json first = doc["devices"][0]["containerEdits"];
  CHECK(first["deviceNodes"] ==
        Json::array(
            {{{"path", "/dev/nvidia3"}, {"hostPath", f.host().dev_root() + "/dev/nvidia3"}},
             {{"path", "/dev/dri/card4"}, {"hostPath", f.host().dev_root() + "/dev/dri/card4"}},
             {{"path", "/dev/dri/renderD131"},
              {"hostPath", f.host().dev_root() + "/dev/dri/renderD131"}}}));
  CHECK_FALSE(first.contains("additionalGids"));
  // A name engines would not read gets the format's extension, as NVIDIA's tool adds it.
  const std::string out = f.path("named");
  CHECK(f.ctk({"cdi", "generate", "--output", out + "/nvidia"}).exit_code == 0);
  CHECK(gcr::test::read_file(out + "/nvidia.yaml").rfind("---\n", 0) == 0);
  CHECK(f.ctk({"cdi", "generate", "--format", "json", "--output", out + "/nvidia.yml"}).exit_code ==
        0);
  // As NVIDIA's tool names it: .yml becomes .yaml, holding the format asked for (a spec file is
  // read in either form, whatever its name).
  CHECK(Json::parse(gcr::test::read_file(out + "/nvidia.yaml"))["kind"] == "nvidia.com/gpu");
  CHECK(f.ctk({"cdi", "validate", out + "/nvidia.yaml"}).out == out + "/nvidia.yaml: ok\n");
  CHECK_FALSE(gcr::test::exists(out + "/nvidia"));
  CHECK_FALSE(gcr::test::exists(out + "/nvidia.yml"));
  CHECK_FALSE(gcr::test::exists(out + "/nvidia.yml.json"));
  // An engine applying the spec and then running the shim: the image's request is void.
  CHECK(doc["containerEdits"]["env"] == Json::array({"NVIDIA_VISIBLE_DEVICES=void"}));

  // GPUs the driver has not initialised (no UUID yet): named by index only, said once each; the
  // spec stays valid, where `GPU-????...` names would make it invalid.
  f.host().set_initialised(1, false);
  f.host().set_initialised(2, false);
  const auto partial = f.ctk({"cdi", "generate", "--format", "json"});
  REQUIRE_MESSAGE(partial.exit_code == 0, partial.err);
  CHECK(partial.err.find("gpu-ctk cdi generate: warning: GPU 2 (" + f.host().gpus()[2].bus +
                         ") has no device named by UUID: the driver gives none until it "
                         "initialises the GPU") != std::string::npos);
  const Json partial_doc = Json::parse(partial.out);
  std::set<std::string> names;
  for (const auto& device : partial_doc["devices"]) names.insert(device["name"]);
  CHECK(names.count("2") == 1);
  CHECK(names.count(f.host().gpus()[0].uuid) == 1);
  CHECK(std::none_of(names.begin(), names.end(),
                     [](const std::string& n) { return n.find('?') != std::string::npos; }));
}

TEST_CASE(
    "gpu-ctk cdi generate on a MIG host: a device per MIG device, <gpu>:<mig> and MIG-<uuid>") {
  require_root();
  CdiFixture f;
  const auto& gpus = f.host().gpus();
  const Json doc = Json::parse(f.ctk({"cdi", "generate", "--format", "json"}).out);
  CHECK(device_names(doc) == std::vector<std::string>{"0", gpus[0].uuid, "1", gpus[1].uuid, "1:0",
                                                      kMig0, "1:1", kMig1, "2", gpus[2].uuid, "3",
                                                      gpus[3].uuid, "all"});
  // CDI's device name rule (reference/cdi.md section 5), written out here rather than taken
  // from the reader that validates the spec.
  const std::regex cdi_name("[A-Za-z0-9]([A-Za-z0-9_.:-]*[A-Za-z0-9])?");
  for (const auto& name : device_names(doc)) CHECK_MESSAGE(std::regex_match(name, cdi_name), name);
  CHECK(doc["cdiVersion"] == "0.5.0");  // names starting with a digit need 0.5.0

  const std::string caps = f.host().dev_root() + "/dev/nvidia-caps/nvidia-cap";
  CHECK(device_named(doc, "1:1")["containerEdits"] ==
        Json{{"deviceNodes",
              {{{"path", "/dev/nvidia0"}, {"hostPath", f.host().dev_root() + "/dev/nvidia0"}},
               {{"path", "/dev/nvidia-caps/nvidia-cap21"}, {"hostPath", caps + "21"}},
               {{"path", "/dev/nvidia-caps/nvidia-cap22"}, {"hostPath", caps + "22"}}}}});
  CHECK(device_named(doc, kMig1) ==
        Json{{"name", kMig1}, {"containerEdits", device_named(doc, "1:1")["containerEdits"]}});
  const std::vector<std::string> mig0_nodes = {"/dev/nvidia0", "/dev/nvidia-caps/nvidia-cap12",
                                               "/dev/nvidia-caps/nvidia-cap13"};
  CHECK(node_paths(device_named(doc, "1:0")) == mig0_nodes);
  CHECK(node_paths(device_named(doc, kMig0)) == mig0_nodes);
  // The whole GPU is its node and DRM nodes, no MIG capability; `all` has every instance's.
  CHECK(node_paths(device_named(doc, "1")) ==
        std::vector<std::string>{"/dev/nvidia0", "/dev/dri/card1", "/dev/dri/renderD128"});
  const auto all = node_paths(device_named(doc, "all"));
  for (const char* cap : {"12", "13", "21", "22"}) {
    CHECK(std::count(all.begin(), all.end(), "/dev/nvidia-caps/nvidia-cap" + std::string(cap)) ==
          1);
  }

  const auto validate = f.ctk({"cdi", "validate", f.spec_dir + "/nvidia.yaml"});
  CHECK(validate.exit_code == 0);
  CHECK(validate.out == f.spec_dir + "/nvidia.yaml: ok\n");
  // A file named is checked for what it says, whoever owns it (a spec being written in a home
  // folder); the spec folders, read as the runtime reads them, are checked with their owners.
  const std::string mine = f.path("mine.yaml");
  gcr::test::write_file(mine, gcr::test::read_file(f.spec_dir + "/nvidia.yaml"));
  REQUIRE(::chown(mine.c_str(), 1000, 1000) == 0);
  CHECK(f.ctk({"cdi", "validate", mine}).out == mine + ": ok\n");
  const auto list = f.ctk({"cdi", "list"});
  CHECK(list.err == "");
  for (const auto& name : {std::string("1:0"), std::string("1:1"), kMig0, kMig1})
    CHECK_MESSAGE(list.out.find("nvidia.com/gpu=" + name + "\n") != std::string::npos, name);

  const Json typed = Json::parse(
      f.ctk({"cdi", "generate", "--format", "json", "--device-name-strategy", "type-index"}).out);
  CHECK(device_names(typed) ==
        std::vector<std::string>{"gpu0", "gpu1", "mig1:0", "mig1:1", "gpu2", "gpu3", "all"});
}

TEST_CASE("gpu-ctk cdi generate --mode management: one device `all` with every NVIDIA node") {
  require_root();
  CdiFixture f;
  const std::string path = f.spec_dir + "/management.json";
  const auto r = f.ctk({"cdi", "generate", "--mode", "management", "--output", path});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("gpu-ctk cdi: wrote " + path + " (1 devices") == 0);
  const Json doc = Json::parse(gcr::test::read_file(path));
  CHECK(doc["kind"] == "management.nvidia.com/gpu");
  CHECK(device_names(doc) == std::vector<std::string>{"all"});
  const auto nodes = node_paths(device_named(doc, "all"));
  const auto has = [&](const std::string& node) {
    return std::count(nodes.begin(), nodes.end(), node) == 1;
  };
  for (const auto& gpu : f.host().gpus()) CHECK(has("/dev/nvidia" + std::to_string(gpu.minor)));
  for (const char* node :
       {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset",
        "/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-caps/nvidia-cap2",
        "/dev/nvidia-caps/nvidia-cap22", "/dev/nvidia-caps-imex-channels/channel0",
        "/dev/nvidia-caps-imex-channels/channel3"})
    CHECK_MESSAGE(has(node), node);
  for (const auto& node : nodes) {
    CHECK_FALSE(node.starts_with("/dev/nvidia-fs"));
    CHECK_FALSE(node.starts_with("/dev/nvidia-nvswitch"));
  }
  const Json all = device_named(doc, "all");
  for (const auto& node : all["containerEdits"]["deviceNodes"])
    CHECK(node["hostPath"] == f.host().dev_root() + node["path"].get<std::string>());
  // The driver's files and the library hook, as in the GPUs' spec; nothing that limits what the
  // container does with the devices.
  const Json& common = doc["containerEdits"];
  CHECK_FALSE(common.contains("deviceNodes"));
  CHECK_FALSE(common["mounts"].empty());
  std::vector<std::string> hooks;
  for (const auto& hook : common["hooks"]) hooks.push_back(hook["args"][2]);
  CHECK(hooks == std::vector<std::string>{"enable-cuda-compat", "update-libraries"});

  const auto validate = f.ctk({"cdi", "validate", path});
  CHECK(validate.out == path + ": ok\n");
  const auto list = f.ctk({"cdi", "list"});
  CHECK(list.err == "");
  CHECK(list.out.find("management.nvidia.com/gpu=all\n") != std::string::npos);
  CHECK(list.out.find("\nnvidia.com/gpu=all\n") != std::string::npos);

  // Asked for by name through the shim: refused to a container that is not privileged, as the
  // MIG management capabilities are; a privileged one gets every GPU and the MIG capabilities,
  // no GDS or NVSwitch node.
  const auto refused = f.create({"NVIDIA_VISIBLE_DEVICES=management.nvidia.com/gpu=all"});
  CHECK(refused.exit_code != 0);
  CHECK(refused.err.find("NVIDIA_VISIBLE_DEVICES: management.nvidia.com/gpu=all: the MIG config "
                         "capability /dev/nvidia-caps/nvidia-cap1 needs a privileged container "
                         "(CAP_SYS_ADMIN)") != std::string::npos);
  CHECK(f.devices().empty());
  const auto created =
      f.create({"NVIDIA_VISIBLE_DEVICES=management.nvidia.com/gpu=all"},
               {{"process", {{"capabilities", {{"bounding", {"CAP_SYS_ADMIN"}}}}}}});
  REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  const auto devices = f.devices();
  for (const auto& gpu : f.host().gpus())
    CHECK(devices.count("/dev/nvidia" + std::to_string(gpu.minor)) == 1);
  CHECK(devices.count("/dev/nvidia-caps/nvidia-cap21") == 1);
  CHECK(devices.count("/dev/nvidia-fs0") == 0);
  CHECK(devices.count("/dev/nvidia-nvswitchctl") == 0);
}

TEST_CASE("the management spec under NVIDIA's flags, and without device nodes") {
  require_root();
  CdiFixture f;
  const auto nvidia = f.ctk({"cdi", "generate", "--format", "json", "--discovery-mode=management",
                             "--cdi-vendor=management.nvidia.com", "--cdi-class=gpu"});
  REQUIRE_MESSAGE(nvidia.exit_code == 0, nvidia.err);
  CHECK(Json::parse(nvidia.out)["kind"] == "management.nvidia.com/gpu");
  const auto named =
      f.ctk({"cdi", "generate", "--format", "json", "--mode=management", "--vendor=example.com"});
  CHECK(Json::parse(named.out)["kind"] == "example.com/gpu");
  gcr::test::make_dirs(f.path("empty/dev"));
  const auto none =
      f.ctk({"cdi", "generate", "--mode", "management", "--dev-root", f.path("empty")});
  CHECK(none.exit_code == 1);
  CHECK(none.err == "gpu-ctk cdi: no NVIDIA device nodes in " + f.path("empty") + "/dev\n");
  const auto named_too = f.ctk({"cdi", "generate", "--mode", "management", "--no-all-device"});
  CHECK(named_too.exit_code == 1);
  CHECK(named_too.err ==
        "gpu-ctk cdi: --device-name-strategy and --no-all-device do not apply "
        "to --mode management\n");
  const auto wsl = f.ctk({"cdi", "generate", "--mode", "wsl"});
  CHECK(wsl.exit_code == 2);
  CHECK(wsl.err.find("--mode=wsl is not supported") != std::string::npos);
}

TEST_CASE("gpu-ctk cdi generate --mode imex: a device per IMEX channel, as the plugin names") {
  require_root();
  CdiFixture f;
  const std::string path = f.spec_dir + "/imex.json";
  const std::string odd = f.host().dev_root() + "/dev/nvidia-caps-imex-channels/channel01";
  REQUIRE(::mknod(odd.c_str(), S_IFCHR | 0666, ::makedev(f.host().imex_major(), 1)) == 0);
  const auto r = f.ctk({"cdi", "generate", "--mode", "imex", "--output", path});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("warning: IMEX channel device left out: its name is no channel number (" + odd +
                   ")\n") != std::string::npos);
  // The host's channel3 has minor 4: not that channel, left out with a line.
  CHECK(r.err.find("gpu-ctk cdi generate: warning: IMEX channel 3 left out: device node minor 4 "
                   "is not channel 3 (" +
                   f.host().dev_root() + "/dev/nvidia-caps-imex-channels/channel3)\n") !=
        std::string::npos);
  const Json doc = Json::parse(gcr::test::read_file(path));
  CHECK(doc["kind"] == "nvidia.com/imex-channel");
  CHECK(device_names(doc) == std::vector<std::string>{"0", "1", "all"});
  CHECK(node_paths(device_named(doc, "1")) ==
        std::vector<std::string>{"/dev/nvidia-caps-imex-channels/channel1"});
  CHECK(node_paths(device_named(doc, "all")) ==
        std::vector<std::string>{"/dev/nvidia-caps-imex-channels/channel0",
                                 "/dev/nvidia-caps-imex-channels/channel1"});
  CHECK_FALSE(doc.contains("containerEdits"));
  CHECK(f.ctk({"cdi", "validate", path}).out == path + ": ok\n");
  CHECK(Json::parse(f.ctk({"cdi", "generate", "--format", "json", "--discovery-mode=imex",
                           "--cdi-vendor=example.com"})
                        .out)["kind"] == "example.com/imex-channel");

  // What the device plugin hands with imex-channel and a CDI strategy: the GPU and channel 0.
  const auto created = f.create({}, {{"annotations",
                                      {{"cdi.k8s.io/gpu-device-plugin_nvidia.com_gpu",
                                        "nvidia.com/gpu=0,nvidia.com/imex-channel=0"}}}});
  REQUIRE_MESSAGE(created.exit_code == 0, created.err);
  CHECK(f.devices().at("/dev/nvidia-caps-imex-channels/channel0") == "510:0");
  CHECK(f.devices().count("/dev/nvidia-caps-imex-channels/channel1") == 0);
  CHECK(f.devices().count("/dev/nvidia" + std::to_string(f.host().gpus()[0].minor)) == 1);

  std::filesystem::remove_all(f.host().dev_root() + "/dev/nvidia-caps-imex-channels");
  const auto none = f.ctk({"cdi", "generate", "--mode", "imex"});
  CHECK(none.exit_code == 1);
  CHECK(none.err == "gpu-ctk cdi: no usable IMEX channel in " + f.host().dev_root() +
                        "/dev/nvidia-caps-imex-channels (the driver makes channel0 with "
                        "NVreg_CreateImexChannel0=1)\n");
}

TEST_CASE("gpu-ctk cdi generate asks NVML only when the driver lists MIG instances") {
  require_root();
  CdiFixture f;
  const std::string nvml =
      f.host().driver_root() + f.host().lib_dir() + "/libnvidia-ml.so." + f.host().version();
  REQUIRE(::unlink(nvml.c_str()) == 0);
  const auto refused = f.ctk({"cdi", "generate"});
  CHECK(refused.exit_code == 1);
  CHECK(refused.err ==
        "gpu-ctk cdi: GPU 1 has MIG instances, but NVML cannot name its MIG "
        "devices: no libnvidia-ml.so." +
            f.host().version() + " in the driver root\n");
  f.host().remove_mig_instances();
  const auto r = f.ctk({"cdi", "generate", "--format", "json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto& gpus = f.host().gpus();
  CHECK(device_names(Json::parse(r.out)) ==
        std::vector<std::string>{"0", gpus[0].uuid, "1", gpus[1].uuid, "2", gpus[2].uuid, "3",
                                 gpus[3].uuid, "all"});
}

TEST_CASE(
    "a CDI name of a MIG device gives what its live ID gives: parent node, its capabilities") {
  require_root();
  CdiFixture f;
  using Devices = std::map<std::string, std::string>;
  const Devices mig1 = {{"/dev/nvidia0", "195:0"},
                        {"/dev/nvidiactl", "195:255"},
                        {"/dev/nvidia-modeset", "195:254"},
                        {"/dev/nvidia-uvm", "508:0"},
                        {"/dev/nvidia-uvm-tools", "508:1"},
                        {"/dev/nvidia-caps/nvidia-cap21", "509:21"},
                        {"/dev/nvidia-caps/nvidia-cap22", "509:22"}};
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=1:1"}).err == "");
  CHECK(f.devices() == mig1);
  const Json rules = f.spec()["linux"]["resources"]["devices"];
  const auto allows = [&](unsigned major, unsigned minor) {
    const Json rule = {
        {"allow", true}, {"type", "c"}, {"major", major}, {"minor", minor}, {"access", "rwm"}};
    return std::count(rules.begin(), rules.end(), rule);
  };
  CHECK(allows(509, 21) == 1);
  CHECK(allows(509, 22) == 1);
  CHECK(allows(509, 12) == 0);  // the other instance's
  CHECK(allows(195, 3) == 0);   // another GPU
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=1:1", "NVIDIA_DRIVER_CAPABILITIES=all"}).err == "");
  CHECK(f.devices() == mig1);

  REQUIRE(f.create({}, {{"annotations", {{"cdi.k8s.io/gpu", "nvidia.com/gpu=" + kMig0}}}}).err ==
          "");
  Devices mig0 = mig1;
  mig0.erase("/dev/nvidia-caps/nvidia-cap21");
  mig0.erase("/dev/nvidia-caps/nvidia-cap22");
  mig0["/dev/nvidia-caps/nvidia-cap12"] = "509:12";
  mig0["/dev/nvidia-caps/nvidia-cap13"] = "509:13";
  CHECK(f.devices() == mig0);
}

TEST_CASE("the shim resolves CDI names: environment, annotations, mode cdi; mixed with live IDs") {
  require_root();
  CdiFixture f;
  const auto& gpus = f.host().gpus();
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=" + gpus[2].uuid}).exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia4") == 1);
  CHECK(f.devices().count("/dev/nvidiactl") == 1);
  CHECK(f.devices().count("/dev/nvidia0") == 0);
  // No rootfs to look into here: the spec's hooks do the work in the container.
  const Json hooks = f.spec()["hooks"]["createContainer"];
  REQUIRE(hooks.size() == 4);
  CHECK(hooks[0]["args"] ==
        Json::array({"gpu-ctk", "hook", "enable-cuda-compat", "--host-driver-version",
                     gcr::test::SimHost::version(), "--cuda-compat-container-root",
                     "/usr/local/cuda/compat"}));
  CHECK(hooks[1]["args"][2] == "update-libraries");
  CHECK(hooks[2]["args"][2] == "disable-device-node-modification");
  CHECK(hooks[3]["args"][2] == "update-application-profile");

  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=all"},
                   {{"annotations", {{"cdi.k8s.io/gpu", "nvidia.com/gpu=1"}}}})
              .exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia0") == 1);
  CHECK(f.devices().count("/dev/nvidia3") == 0);

  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0,3"}).exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia3") == 1);
  CHECK(f.devices().count("/dev/nvidia1") == 1);

  f.configure({{"cdi", {{"spec-dirs", {f.spec_dir}}}}, {"requests", {{"mode", "cdi"}}}});
  const auto mode_cdi = f.create({"NVIDIA_VISIBLE_DEVICES=3"});
  REQUIRE_MESSAGE(mode_cdi.exit_code == 0, mode_cdi.err);
  CHECK(f.devices().count("/dev/nvidia1") == 1);
}

TEST_CASE("NVIDIA's just-in-time names need no spec: runtime.nvidia.com/gpu=<id> is that GPU") {
  require_root();
  GpuFixture f;
  f.configure({{"cdi", {{"spec-dirs", {f.path("no-specs")}}}}});
  const auto& gpus = f.host().gpus();
  const auto r = f.create({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=" + gpus[2].uuid});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(f.devices().count("/dev/nvidia4") == 1);
  CHECK(f.devices().count("/dev/nvidia3") == 0);
  CHECK(f.devices().count("/dev/nvidiactl") == 1);
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=all"}).exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia3") == 1);
  CHECK(f.devices().count("/dev/nvidia4") == 1);
  const auto unknown = f.create({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=9"});
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.err.find("9") != std::string::npos);
}

TEST_CASE("as nvidia-container-runtime.cdi and .legacy: NVIDIA's modes by the program's name") {
  require_root();
  CdiFixture f;
  gcr::test::make_dirs(f.path("bin"));
  // .cdi: IDs are names of [cdi] default-kind, resolved from the spec files.
  f.set_program(f.path("bin/nvidia-container-runtime.cdi"));
  const auto from_spec = f.create({"NVIDIA_VISIBLE_DEVICES=3"});
  REQUIRE_MESSAGE(from_spec.exit_code == 0, from_spec.err);
  CHECK(f.devices().count("/dev/nvidia1") == 1);
  f.configure({{"cdi", {{"spec-dirs", {f.path("no-specs")}}}}});
  const auto no_spec = f.create({"NVIDIA_VISIBLE_DEVICES=3"});
  CHECK(no_spec.exit_code != 0);
  CHECK(no_spec.err.find("nvidia.com/gpu=3") != std::string::npos);
  // .legacy: the live driver, whatever the file's mode.
  f.configure({{"cdi", {{"spec-dirs", {f.path("no-specs")}}}}, {"requests", {{"mode", "cdi"}}}});
  f.set_program(f.path("bin/nvidia-container-runtime.legacy"));
  const auto live = f.create({"NVIDIA_VISIBLE_DEVICES=3"});
  REQUIRE_MESSAGE(live.exit_code == 0, live.err);
  CHECK(f.devices().count("/dev/nvidia1") == 1);
}

TEST_CASE("the shim's log line names the CDI devices asked for, not capabilities they ignore") {
  require_root();
  CdiFixture f;
  f.configure(
      {{"cdi", {{"spec-dirs", {f.spec_dir}}}}, {"runtime", {{"log-file", f.path("shim.log")}}}});
  REQUIRE(f.create({}, {{"annotations", {{"cdi.k8s.io/gpu", "nvidia.com/gpu=1"}}}}).exit_code == 0);
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0,nvidia.com/gpu=2"}).exit_code == 0);
  const std::string log = gcr::test::read_file(f.path("shim.log"));
  CHECK(log.find("GPU request (CDI devices nvidia.com/gpu=1, with their specs' edits): spec now "
                 "has ") != std::string::npos);
  CHECK(log.find("GPU request (compute,utility; CDI devices nvidia.com/gpu=2, with their specs' "
                 "edits): spec now has ") != std::string::npos);
  CHECK(log.find("GPU request (compute,utility): ") == std::string::npos);
}

TEST_CASE("CDI devices only: the image's capabilities and MIG variables are not read") {
  require_root();
  CdiFixture f;
  f.configure({{"cdi", {{"spec-dirs", {f.spec_dir}}}},
               {"runtime", {{"log-file", f.path("shim.log")}, {"log-level", "debug"}}}});
  // An unknown capability and MIG monitoring in an unprivileged pod: not this request's to use.
  const std::vector<std::string> image{"NVIDIA_DRIVER_CAPABILITIES=compute,utility,optix",
                                       "NVIDIA_MIG_MONITOR_DEVICES=all"};
  const auto r = f.create(image, {{"annotations", {{"cdi.k8s.io/gpu", "nvidia.com/gpu=1"}}}});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(f.devices().count("/dev/nvidia0") == 1);
  CHECK(f.devices().count("/dev/nvidia-caps/nvidia-cap2") == 0);
  CHECK(gcr::test::read_file(f.path("shim.log"))
            .find("NVIDIA_DRIVER_CAPABILITIES, NVIDIA_MIG_MONITOR_DEVICES not used: only CDI "
                  "devices are asked for") != std::string::npos);
  // With a live GPU beside them, the variables are that GPU's, and read as before.
  auto live = image;
  live.emplace_back("NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=1,2");
  const auto refused = f.create(live);
  CHECK(refused.exit_code != 0);
  CHECK(refused.err.find("unknown driver capability `optix`") != std::string::npos);
}

TEST_CASE(
    "unresolvable names and hostile specs fail create with the reason; the bundle is intact") {
  require_root();
  CdiFixture f;
  auto r = f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=9"});
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "gpu-container-runtime: cannot give the container its GPUs: unresolvable CDI devices "
        "nvidia.com/gpu=9\n");
  CHECK(f.record().is_null());

  REQUIRE(::chmod((f.spec_dir + "/nvidia.yaml").c_str(), 0664) == 0);
  r = f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0"});
  CHECK(r.err.find("unresolvable CDI devices nvidia.com/gpu=0 (1 spec problem(s), first: " +
                   f.spec_dir + "/nvidia.yaml: writable by group or others)") != std::string::npos);
  REQUIRE(::chmod((f.spec_dir + "/nvidia.yaml").c_str(), 0644) == 0);

  const std::pair<std::string, std::string> hostile[] = {
      {R"({"cdiVersion":"0.5.0","kind":"evil.com/x","devices":[{"name":"a","containerEdits":{"hooks":[{"hookName":"createContainer","path":"tmp/evil"}]}}]})",
       "must be a clean absolute path"},
      {R"({"cdiVersion":"0.5.0","kind":"evil.com/x","devices":[{"name":"a","containerEdits":{"deviceNodes":[{"path":"/etc/shadow","hostPath":"/dev/sda"}]}}]})",
       "must be a clean path under /dev"},
      {std::string(
           R"({"cdiVersion":"0.5.0","kind":"evil.com/x","devices":[{"name":"a","containerEdits":{"env":["A=)") +
           std::string(10u << 20, 'x') + R"("]}}]})",
       "larger than 4194304 bytes"},
      {R"({"cdiVersion":"0.5.0","kind":"evil.com/x","devices":[{"name":"a","containerEdits":{"env":[)" +
           std::string(300, '[') + std::string(300, ']') + "]}}]}",
       "nesting deeper than 256 levels"},
  };
  for (const auto& entry : hostile) {
    const auto& text = entry.first;  // named: doctest's CAPTURE cannot take a binding
    const auto& reason = entry.second;
    CAPTURE(reason);
    gcr::test::write_file(f.spec_dir + "/evil.json", text);
    r = f.create({"NVIDIA_VISIBLE_DEVICES=evil.com/x=a"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(reason) != std::string::npos);
    const auto validate = f.ctk({"cdi", "validate"});
    CHECK(validate.exit_code == 1);
    CHECK(validate.out.find(f.spec_dir + "/evil.json: ") != std::string::npos);
  }
}

TEST_CASE("a real container through the shim gets exactly the CDI-named GPU") {
  require_root();
  CdiFixture f;
  f.configure({{"cdi", {{"spec-dirs", {f.spec_dir}}}},
               {"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
  gcr::test::make_glibc_rootfs(f.bundle());
  Json spec =
      gcr::test::busybox_spec({"/bin/sh", "-c", "ls /dev | grep nvidia | tr '\\n' ' '; /probe"});
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=" +
                                   f.host().gpus()[0].uuid);
  f.write_spec(spec.dump());
  const auto r = f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-cdi"});
  CHECK(r.err == "");
  CHECK(r.out ==
        "nvidia-modeset nvidia-uvm nvidia-uvm-tools nvidia3 nvidiactl cuDriverGetVersion: 12040\n");
}

TEST_CASE("gpu-ctk cdi transform root: JSON on stdin, the container's side, one-line errors") {
  require_root();
  CdiFixture f;
  const std::string json =
      f.ctk({"cdi", "generate", "--format", "json", "--device-name-strategy", "type-index"}).out;
  gcr::test::RunOptions in;
  in.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
  in.stdin_text = json;
  const std::string root = f.host().driver_root();
  const std::string lib = "/usr/lib/x86_64-linux-gnu";
  const auto moved =
      gcr::test::run({gcr::test::built("gpu-ctk"), "cdi", "transform", "root", "--from", lib,
                      "--to=/opt/lib", "--relative-to", "container", "--format", "json"},
                     in);
  REQUIRE_MESSAGE(moved.exit_code == 0, moved.err);
  const Json doc = Json::parse(moved.out);
  const Json before = Json::parse(json);
  REQUIRE(doc["containerEdits"]["mounts"].size() == before["containerEdits"]["mounts"].size());
  bool library = false;
  for (std::size_t i = 0; i < before["containerEdits"]["mounts"].size(); ++i) {
    const Json& was = before["containerEdits"]["mounts"][i];
    const Json& now = doc["containerEdits"]["mounts"][i];
    const std::string container = was["containerPath"];
    CHECK(now["hostPath"] == was["hostPath"]);  // the host's side stays
    if (container.rfind(lib + "/", 0) != 0) {
      CHECK(now["containerPath"] == container);
      continue;
    }
    CHECK(now["containerPath"] == "/opt/lib" + container.substr(lib.size()));
    library = library || container.find("/libcuda.so.") != std::string::npos;
  }
  CHECK(library);
  // The GPUs' nodes are not under the root: their paths stay.
  const auto nodes = node_paths(device_named(doc, "gpu0"));
  CHECK(nodes == node_paths(device_named(Json::parse(json), "gpu0")));
  CHECK(nodes.at(0).rfind("/dev/nvidia", 0) == 0);

  // A flag NVIDIA's spells with an empty value (`--to=`): the root moved to /.
  in.stdin_text = json;
  const auto to_slash = gcr::test::run(
      {gcr::test::built("gpu-ctk"), "cdi", "transform", "root", "--from=" + root, "--to="}, in);
  REQUIRE_MESSAGE(to_slash.exit_code == 0, to_slash.err);
  CHECK(to_slash.out.find(root) == std::string::npos);
  CHECK(to_slash.out.find("hostPath: /usr/lib/") != std::string::npos);

  in.stdin_text = json;
  const auto outside =
      gcr::test::run({gcr::test::built("gpu-ctk"), "cdi", "transform", "root", "--from", "/dev",
                      "--to", "/host-dev", "--relative-to", "container"},
                     in);
  CHECK(outside.exit_code == 1);
  CHECK(outside.out == "");
  CHECK(outside.err.rfind("gpu-ctk cdi: the transformed spec is invalid: ", 0) == 0);
  CHECK(outside.err.find("/host-dev/") != std::string::npos);
  CHECK(std::count(outside.err.begin(), outside.err.end(), '\n') == 1);
}

// A driver container's spec, generated where the driver's files were, moved with them: what a
// host whose view of the driver differs from the generator's needs (nvidia-ctk cdi transform).
TEST_CASE("a spec moved with cdi transform root serves a real container from the new root") {
  require_root();
  CdiFixture f;
  const std::string from = f.host().driver_root();
  const std::string to = from + "-moved";
  REQUIRE(::rename(from.c_str(), to.c_str()) == 0);
  f.configure({{"cdi", {{"spec-dirs", {f.spec_dir}}}},
               {"driver", {{"root", to}}},
               {"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
  gcr::test::make_glibc_rootfs(f.bundle());
  Json spec = gcr::test::busybox_spec({"/bin/sh", "-c", "/probe"});
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0");
  const auto run = [&](const std::string& id) {
    f.write_spec(spec.dump());
    return f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), id});
  };
  const auto stale = run("gcr-stale");
  CHECK(stale.exit_code != 0);  // its mounts name files that are gone

  const std::string file = f.spec_dir + "/nvidia.yaml";
  const auto moved = f.ctk({"cdi", "transform", "root", "--from", from + "/", "--to", to, "--input",
                            file, "--output", file});
  REQUIRE_MESSAGE(moved.exit_code == 0, moved.err);
  const std::string text = gcr::test::read_file(file);
  CHECK(text.find(from + "/") == std::string::npos);
  CHECK(text.find(to + "/") != std::string::npos);
  CHECK(f.ctk({"cdi", "validate", file}).out == file + ": ok\n");
  const auto r = run("gcr-moved");
  CHECK(r.err == "");
  CHECK(r.out == "cuDriverGetVersion: 12040\n");
}

TEST_CASE("a real container through the shim gets exactly the MIG device its CDI name names") {
  require_root();
  CdiFixture f;
  f.configure({{"cdi", {{"spec-dirs", {f.spec_dir}}}},
               {"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
  gcr::test::make_busybox_rootfs(f.bundle());
  Json spec = gcr::test::busybox_spec(
      {"/bin/sh", "-c",
       "ls /dev | grep nvidia | tr '\\n' ' '; ls -l /dev/nvidia-caps | grep '^c' | "
       "awk '{printf \"%s=%s%s \", $NF, $5, $6}'"});
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=1:1");
  f.write_spec(spec.dump());
  const auto r = f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-mig"});
  CHECK(r.err == "");
  CHECK(r.out ==
        "nvidia-caps nvidia-modeset nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl "
        "nvidia-cap21=509,21 nvidia-cap22=509,22 ");
}

TEST_CASE("podman reads the generated spec from /var/run/cdi: --device gives exactly that GPU") {
  require_root();
  REQUIRE_MESSAGE(gcr::test::exists("/usr/bin/podman"),
                  "podman is not installed: run scripts/install-deps.sh");
  GpuFixture f;
  const std::string vendor = "gcr-test-" + std::to_string(::getpid()) + ".example.com";
  const std::string spec_file = "/var/run/cdi/" + vendor + ".json";
  gcr::test::make_dirs("/var/run/cdi");
  REQUIRE(gcr::test::run({gcr::test::built("gpu-ctk"), "cdi", "generate", "--driver-root",
                          f.host().driver_root(), "--dev-root", f.host().dev_root(), "--vendor",
                          vendor, "--ctk-path", gcr::test::built("gpu-ctk"), "--output", spec_file})
              .exit_code == 0);
  const std::string image = gcr::test::make_busybox_image_tar(f.path("image"));
  const std::vector<std::string> podman = {"/usr/bin/podman",        "--root",
                                           f.path("podman/storage"), "--runroot",
                                           f.path("podman/run"),     "--cgroup-manager=cgroupfs",
                                           "--events-backend=file",  "--storage-driver=vfs"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), podman.begin(), podman.end());
    return gcr::test::run(args);
  };
  const auto run_with = [&](const std::string& device) {
    return with({"run", "--rm", "--device", vendor + "/gpu=" + device, "--ulimit",
                 "nofile=1024:1024", "--ulimit", "nproc=1024:1024", "--network", "none",
                 "gcr-busybox", "sh", "-c",
                 "{ ls /dev | grep nvidia; ls /dev/nvidia-caps 2>/dev/null; } | tr '\\n' ' '"});
  };
  REQUIRE(with({"import", image, "gcr-busybox"}).exit_code == 0);
  const auto r = run_with("1");
  // A MIG device by its <gpu>:<mig> name: the CDI reference library reads it as we write it.
  const auto mig = run_with("1:1");
  ::unlink(spec_file.c_str());
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "nvidia-modeset nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl ");
  CHECK(mig.err == "");
  CHECK(mig.out ==
        "nvidia-caps nvidia-modeset nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl nvidia-cap21 "
        "nvidia-cap22 ");
  (void)with({"rmi", "-f", "gcr-busybox"});
}
