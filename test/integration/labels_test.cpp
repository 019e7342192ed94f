// Node labels (issue 29) on simulated hosts with the stub NVML describing real machines: the
// exact label set gpu-device-plugin writes and gpu-ctk labels prints for each topology; the
// file rewritten only where a driver upgrade, a MIG change, health or a sharing change alters a
// label, and left alone otherwise (same inode and mtime), across a restart and SIGTERM; labels
// from the driver's files while NVML is not ready, completed when it is; a GPU named with no
// letter or digit still gets a valid product label (issue 41). Needs root.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <chrono>
#include <functional>
#include <map>
#include <thread>

#include "label_checks.h"
#include "labels/labels.h"
#include "plugin_fixture.h"
#include "topology_fixtures.h"

using gcr::Json;
using gcr::test::PluginFixture;
using Labels = std::map<std::string, std::string>;
using namespace std::chrono_literals;

namespace {

using gcr::test::require_root;

Labels parse_labels(const std::string& text) {
  Labels out;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    const auto eq = line.find('=');
    out[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
    at = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

std::string labels_text(PluginFixture& f) {
  return gcr::test::exists(f.labels_file()) ? gcr::test::read_file(f.labels_file()) : "";
}

// The file's labels once `done` holds for them (within ten seconds), else the last read.
Labels wait_for_labels(PluginFixture& f, const std::function<bool(const Labels&)>& done) {
  Labels labels;
  for (int i = 0; i < 100; ++i) {
    labels = parse_labels(labels_text(f));
    if (!labels.empty() && done(labels)) break;
    std::this_thread::sleep_for(100ms);
  }
  return labels;
}

Labels wait_for_label(PluginFixture& f, const std::string& name, const std::string& value) {
  return wait_for_labels(f, [&](const Labels& l) {
    const auto it = l.find(name);
    return it != l.end() && it->second == value;
  });
}

// The labels that differ between two sets: name -> {before, after} ("" when absent).
std::map<std::string, std::pair<std::string, std::string>> changed(const Labels& before,
                                                                   const Labels& after) {
  std::map<std::string, std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : after) {
    const auto was = before.find(name);
    if (was == before.end() || was->second != value)
      out[name] = {was == before.end() ? "" : was->second, value};
  }
  for (const auto& [name, value] : before) {
    if (after.count(name) == 0) out[name] = {value, ""};
  }
  return out;
}

struct FileStamp {
  ino_t inode = 0;
  timespec mtime{};
  bool operator==(const FileStamp& o) const {
    return inode == o.inode && mtime.tv_sec == o.mtime.tv_sec && mtime.tv_nsec == o.mtime.tv_nsec;
  }
};

FileStamp stamp_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return FileStamp{st.st_ino, st.st_mtim};
}

// GFD's labels on the simulated host with NVML (GPU 0 is an A100 on bus 06), and ours.
Labels expected_labels(unsigned gpus, const std::string& largest, const std::string& count,
                       const std::string& nvswitch) {
  return Labels{
      {"nvidia.com/cuda.driver-version.full", "550.54.15"},
      {"nvidia.com/cuda.driver-version.major", "550"},
      {"nvidia.com/cuda.driver-version.minor", "54"},
      {"nvidia.com/cuda.driver-version.revision", "15"},
      {"nvidia.com/cuda.driver.major", "550"},
      {"nvidia.com/cuda.driver.minor", "54"},
      {"nvidia.com/cuda.driver.rev", "15"},
      {"nvidia.com/cuda.runtime-version.full", "12.4"},
      {"nvidia.com/cuda.runtime-version.major", "12"},
      {"nvidia.com/cuda.runtime-version.minor", "4"},
      {"nvidia.com/cuda.runtime.major", "12"},
      {"nvidia.com/cuda.runtime.minor", "4"},
      {"nvidia.com/gpu.compute.major", "8"},
      {"nvidia.com/gpu.compute.minor", "0"},
      {"nvidia.com/gpu.count", std::to_string(gpus)},
      {"nvidia.com/gpu.family", "ampere"},
      {"nvidia.com/gpu.healthy", std::to_string(gpus)},
      {"nvidia.com/gpu.machine", "unknown"},  // the simulated host has no DMI
      {"nvidia.com/gpu.memory", "40960"},
      {"nvidia.com/gpu.mode", "compute"},
      {"nvidia.com/gpu.models", "1"},
      {"nvidia.com/gpu.nvlink.clique-count", count},
      {"nvidia.com/gpu.nvlink.largest-clique", largest},
      {"nvidia.com/gpu.nvswitch", nvswitch},
      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
      {"nvidia.com/gpu.replicas", "1"},
      {"nvidia.com/gpu.sharing-strategy", "none"},
      {"nvidia.com/mig.capable", "true"},
      {"nvidia.com/mps.capable", "false"},
  };
}

gcr::test::RunOptions labels_ctk_env(const PluginFixture& f) {
  auto env = f.plugin_env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.dir / "config.json";
  return env;
}

}  // namespace

TEST_CASE("each topology's exact labels, in the file and from gpu-ctk labels") {
  require_root();
  struct Case {
    const char* fixture;
    const char* largest;
    const char* count;
    const char* nvswitch;
  };
  for (const auto& c : {Case{"dgx1", "4", "2", "false"}, Case{"nvswitch8", "8", "1", "true"},
                        Case{"pcie4", "0", "0", "false"}, Case{"sixteen", "2", "8", "false"}}) {
    CAPTURE(c.fixture);
    const auto& fixture = gcr::test::topology_fixture(c.fixture);
    PluginFixture f(Json::object(), gcr::test::host_options(fixture));
    f.describe_nvml(gcr::test::stub_description(fixture, f.host));
    f.start();
    const auto expected = expected_labels(fixture.gpus, c.largest, c.count, c.nvswitch);
    const auto labels =
        wait_for_labels(f, [&](const Labels& l) { return l.size() >= expected.size(); });
    CHECK(labels == expected);
    gcr::test::check_label_syntax(labels);
    const std::string text = labels_text(f);
    CHECK(text == gcr::labels_text(expected));

    const auto printed = gcr::test::run({gcr::test::built("gpu-ctk"), "labels"}, labels_ctk_env(f));
    CHECK(printed.exit_code == 0);
    CHECK(printed.out == text);
    const auto written =
        gcr::test::run({gcr::test::built("gpu-ctk"), "labels", "--output", f.dir / "nfd/labels"},
                       labels_ctk_env(f));
    CHECK(written.exit_code == 0);
    CHECK(gcr::test::read_file(f.dir / "nfd/labels") == text);
  }
}

TEST_CASE("a driver upgrade and a MIG change rewrite only the labels they change") {
  require_root();
  PluginFixture f(Json{{"mig-strategy", "mixed"}});
  f.describe_nvml("mig 3b 1 0 1 4864\nmig 3b 2 0 1 4864\n");
  f.start();
  const auto before = wait_for_label(f, "nvidia.com/mig-1g.5gb.count", "2");
  REQUIRE_MESSAGE(before.count("nvidia.com/mig-1g.5gb.count") == 1, f.log());
  CHECK(before.at("nvidia.com/gpu.count") == "4");  // GFD counts the GPU in MIG mode too
  CHECK(before.at("nvidia.com/mig-1g.5gb.product") == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb");
  CHECK(before.at("nvidia.com/mig-1g.5gb.memory") == "4864");
  // The share NVML gives a 1g.5gb device on an A100-SXM4-40GB.
  CHECK(before.at("nvidia.com/mig-1g.5gb.multiprocessors") == "14");
  CHECK(before.at("nvidia.com/mig-1g.5gb.slices.gi") == "1");
  CHECK(before.at("nvidia.com/mig-1g.5gb.slices.ci") == "1");
  CHECK(before.at("nvidia.com/mig-1g.5gb.engines.copy") == "1");
  CHECK(before.at("nvidia.com/mig-1g.5gb.engines.decoder") == "0");
  gcr::test::check_label_syntax(before);

  // Nothing changes: the file stays as it is (three ticks and more).
  const auto first = stamp_of(f.labels_file());
  std::this_thread::sleep_for(1600ms);
  CHECK(stamp_of(f.labels_file()) == first);

  // The driver upgraded in place.
  const std::string version = f.host.dev_root() + "/proc/driver/nvidia/version";
  gcr::test::write_file(version,
                        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Thu Jun 20 "
                        "2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  const auto upgraded = wait_for_label(f, "nvidia.com/cuda.driver-version.full", "550.90.07");
  CHECK(changed(before, upgraded) ==
        std::map<std::string, std::pair<std::string, std::string>>{
            {"nvidia.com/cuda.driver-version.full", {"550.54.15", "550.90.07"}},
            {"nvidia.com/cuda.driver-version.minor", {"54", "90"}},
            {"nvidia.com/cuda.driver-version.revision", {"15", "07"}},
            {"nvidia.com/cuda.driver.minor", {"54", "90"}},
            {"nvidia.com/cuda.driver.rev", {"15", "07"}},
        });
  CHECK(f.logged("labels rewritten in " + f.labels_file() +
                 ": nvidia.com/cuda.driver-version.full=550.90.07 (was 550.54.15)"));

  // A third MIG instance.
  const std::string caps = f.host.dev_root() + "/proc/driver/nvidia/capabilities/gpu0/mig/gi3";
  gcr::test::write_file(caps + "/access", "DeviceFileMinor: 30\nDeviceFileMode: 292\n");
  gcr::test::write_file(caps + "/ci0/access", "DeviceFileMinor: 31\nDeviceFileMode: 292\n");
  f.describe_nvml("mig 3b 1 0 1 4864\nmig 3b 2 0 1 4864\nmig 3b 3 0 1 4864\n");
  const auto migs = wait_for_label(f, "nvidia.com/mig-1g.5gb.count", "3");
  CHECK(changed(upgraded, migs) == std::map<std::string, std::pair<std::string, std::string>>{
                                       {"nvidia.com/mig-1g.5gb.count", {"2", "3"}},
                                   });
}

// A GB200 NVL72 tray's GPUs in a multi-node NVLink fabric: GFD's nvidia.com/gpu.clique once
// their registration with the fabric completed, and none while it is in progress.
TEST_CASE("GPUs in a multi-node NVLink fabric: nvidia.com/gpu.clique once registered") {
  require_root();
  const auto& fixture = gcr::test::topology_fixture("nvswitch8");
  PluginFixture f(Json::object(), gcr::test::host_options(fixture));
  const std::string uuid = "6b1f4a2e-93c7-4d0e-8a55-2f9e1c7b3d40";
  // Every GPU's fabric line: its clique, NVML's registration state (2 in progress, 3 done),
  // and for the last GPU its own state, status and cluster.
  const auto fabric = [&](unsigned state, unsigned last_clique, const std::string& last = "3 0",
                          const std::string& last_uuid = "") {
    std::string out = gcr::test::stub_description(fixture, f.host);
    for (unsigned i = 0; i < fixture.gpus; ++i) {
      const bool is_last = i + 1 == fixture.gpus;
      out += "fabric " + f.host.gpus().at(i).bus.substr(5, 2) + " " +
             (is_last && !last_uuid.empty() ? last_uuid : uuid) + " " +
             std::to_string(is_last ? last_clique : 32766) + " " +
             (is_last && state == 3 ? last : std::to_string(state)) + "\n";
    }
    return out;
  };
  const auto printed_clique = [&] {
    const auto printed = gcr::test::run({gcr::test::built("gpu-ctk"), "labels"}, labels_ctk_env(f));
    CHECK(printed.exit_code == 0);
    const auto labels = parse_labels(printed.out);
    const auto it = labels.find("nvidia.com/gpu.clique");
    return it == labels.end() ? std::string("(none)") : it->second;
  };
  f.describe_nvml(fabric(2, 32766));
  f.start();
  const auto registering = wait_for_labels(f, [](const Labels& l) { return l.size() >= 29; });
  REQUIRE_MESSAGE(registering.count("nvidia.com/gpu.count") == 1, f.log());
  CHECK(registering.count("nvidia.com/gpu.clique") == 0);
  f.describe_nvml(fabric(3, 32766));
  const auto registered = wait_for_label(f, "nvidia.com/gpu.clique", uuid + ".32766");
  CHECK(changed(registering, registered) ==
        std::map<std::string, std::pair<std::string, std::string>>{
            {"nvidia.com/gpu.clique", {"", uuid + ".32766"}}});
  const auto printed = gcr::test::run({gcr::test::built("gpu-ctk"), "labels"}, labels_ctk_env(f));
  CHECK(printed.exit_code == 0);
  CHECK(printed.out == labels_text(f));
  // NVML's rules for the last GPU, in another clique: not attached when its registration
  // failed (status 1), its state says no fabric (0) or its cluster UUID is zero, so the others'
  // clique stands; still registering (1) it is left out too.
  const std::string zero = "00000000-0000-0000-0000-000000000000";
  for (const auto& states :
       {std::pair<std::string, std::string>{"3 1", ""}, {"0 0", ""}, {"1 0", ""}, {"3 0", zero}}) {
    const std::string& last = states.first;
    const std::string& last_uuid = states.second;
    CAPTURE(last);
    CAPTURE(last_uuid);
    f.describe_nvml(fabric(3, 7, last, last_uuid));
    CHECK(printed_clique() == uuid + ".32766");
  }
  // GPUs in two cliques: no label (the running plugin takes it back), and why.
  f.describe_nvml(fabric(3, 7));
  const auto taken_back =
      wait_for_labels(f, [](const Labels& l) { return l.count("nvidia.com/gpu.clique") == 0; });
  CHECK(changed(registered, taken_back) ==
        std::map<std::string, std::pair<std::string, std::string>>{
            {"nvidia.com/gpu.clique", {uuid + ".32766", ""}}});
  const auto split = gcr::test::run({gcr::test::built("gpu-ctk"), "labels"}, labels_ctk_env(f));
  CHECK(split.exit_code == 0);
  CHECK(split.out.find("nvidia.com/gpu.clique") == std::string::npos);
  CHECK(split.err.find("label nvidia.com/gpu.clique left out: the GPUs are in 2 fabric cliques (" +
                       uuid + ".32766, " + uuid + ".7)") != std::string::npos);
}

// A VM given a vGPU: its PCI configuration space carries NVIDIA's vendor capability signed
// "VF" with the host's vGPU manager driver; GFD's vgpu labels, absent on a passed-through GPU.
TEST_CASE("a vGPU: nvidia.com/vgpu.present and the host's vGPU manager driver") {
  require_root();
  PluginFixture f(Json::object());
  const auto labels = [&] {
    const auto printed = gcr::test::run({gcr::test::built("gpu-ctk"), "labels"}, labels_ctk_env(f));
    CHECK(printed.exit_code == 0);
    return parse_labels(printed.out);
  };
  CHECK(labels().count("nvidia.com/vgpu.present") == 0);
  std::string config(256, '\0');
  const std::string header = "\xde\x10\xb8\x26\x07\x04\x10\x00\xa1\x00\x02\x03";
  config.replace(0, header.size(), header);
  config[0x34] = '\x60';
  config[0x60] = '\x01';  // power management, then NVIDIA's vendor capability
  config[0x61] = '\xc8';
  std::string cap = std::string("\x09\x00\x1b", 3) + "VF" + std::string("\x00\x16", 2);
  cap += std::string("580.95.05") + std::string(1, '\0') + "r580_00" + std::string(3, '\0');
  config.replace(0xc8, cap.size(), cap);
  gcr::test::write_file(
      f.host.dev_root() + "/sys/bus/pci/devices/" + f.host.gpus().at(0).bus + "/config", config);
  const auto vgpu = labels();
  CHECK(vgpu.at("nvidia.com/vgpu.present") == "true");
  CHECK(vgpu.at("nvidia.com/vgpu.host-driver-version") == "580.95.05");
  CHECK(vgpu.at("nvidia.com/vgpu.host-driver-branch") == "r580_00");
}

// NFD reads the file; whoever removes or edits it, the plugin writes the labels again within
// a tick or two, though the labels themselves did not change.
TEST_CASE("a labels file removed or changed by someone else is written again") {
  require_root();
  PluginFixture f;
  f.start();
  const auto before = wait_for_label(f, "nvidia.com/gpu.count", "3");
  REQUIRE_MESSAGE(!before.empty(), f.log());
  const std::string text = labels_text(f);
  REQUIRE(::unlink(f.labels_file().c_str()) == 0);
  CHECK(wait_for_labels(f, [&](const Labels& l) { return l == before; }) == before);
  CHECK(f.logged("labels written again to " + f.labels_file()));
  gcr::test::write_file(f.labels_file(), "nvidia.com/gpu.count=99\n");
  CHECK(wait_for_labels(f, [&](const Labels& l) { return l == before; }) == before);
  CHECK(labels_text(f) == text);
}

TEST_CASE("SIGTERM and a restart keep the file; a sharing change rewrites what it changes") {
  require_root();
  const auto& fixture = gcr::test::topology_fixture("dgx1");
  PluginFixture f(Json::object(), gcr::test::host_options(fixture));
  f.describe_nvml(gcr::test::stub_description(fixture, f.host));
  f.start();
  const auto before = wait_for_labels(f, [](const Labels& l) { return l.size() >= 29; });
  REQUIRE_MESSAGE(before.size() == 29, f.log());
  const auto first = stamp_of(f.labels_file());

  CHECK(f.plugin->stop() == 0);
  REQUIRE(gcr::test::exists(f.labels_file()));
  CHECK(stamp_of(f.labels_file()) == first);

  // The same configuration: the file is current, not written again.
  f.start_plugin();
  REQUIRE(f.logged("labels in " + f.labels_file() + " (29 labels, unchanged)"));
  CHECK(stamp_of(f.labels_file()) == first);
  CHECK(f.plugin->stop() == 0);

  // Time-slicing turned on.
  auto config = Json::parse(gcr::test::read_file(f.dir / "config.json"));
  config["device-plugin"]["replicas"] = 4;
  gcr::test::write_file(f.dir / "config.json", config.dump(2));
  f.start_plugin();
  const auto shared = wait_for_label(f, "nvidia.com/gpu.sharing-strategy", "time-slicing");
  CHECK(changed(before, shared) ==
        std::map<std::string, std::pair<std::string, std::string>>{
            {"nvidia.com/gpu.product", {"NVIDIA-A100-SXM4-40GB", "NVIDIA-A100-SXM4-40GB-SHARED"}},
            {"nvidia.com/gpu.replicas", {"1", "4"}},
            {"nvidia.com/gpu.sharing-strategy", {"none", "time-slicing"}},
        });
  CHECK(f.logged("labels written to " + f.labels_file() + " (29 labels)"));
  CHECK_FALSE(stamp_of(f.labels_file()) == first);
}

TEST_CASE("a GPU that fails leaves the healthy count and the NVLink sets, and comes back") {
  require_root();
  const auto& fixture = gcr::test::topology_fixture("dgx1");
  PluginFixture f(Json::object(), gcr::test::host_options(fixture));
  f.describe_nvml(gcr::test::stub_description(fixture, f.host));
  f.start();
  const auto before = wait_for_labels(f, [](const Labels& l) { return l.size() >= 29; });
  const auto& gpu = f.host.gpus()[3];
  const std::string node = f.host.dev_root() + "/dev/nvidia" + std::to_string(gpu.minor);
  REQUIRE(::rename(node.c_str(), (node + ".away").c_str()) == 0);
  const auto failed = wait_for_label(f, "nvidia.com/gpu.healthy", "7");
  CHECK(changed(before, failed) == std::map<std::string, std::pair<std::string, std::string>>{
                                       {"nvidia.com/gpu.healthy", {"8", "7"}},
                                       {"nvidia.com/gpu.nvlink.clique-count", {"2", "1"}},
                                   });
  REQUIRE(::rename((node + ".away").c_str(), node.c_str()) == 0);
  CHECK(wait_for_label(f, "nvidia.com/gpu.healthy", "8") == before);
}

TEST_CASE("NVML not ready at start: the driver's labels, completed when NVML loads") {
  require_root();
  PluginFixture f;
  const std::string nvml =
      f.host.driver_root() + f.host.lib_dir() + "/libnvidia-ml.so." + gcr::test::SimHost::version();
  REQUIRE(::rename(nvml.c_str(), (nvml + ".later").c_str()) == 0);
  f.start();
  const auto early = wait_for_labels(f, [](const Labels&) { return true; });
  CHECK(early == Labels{
                     {"nvidia.com/cuda.driver-version.full", "550.54.15"},
                     {"nvidia.com/cuda.driver-version.major", "550"},
                     {"nvidia.com/cuda.driver-version.minor", "54"},
                     {"nvidia.com/cuda.driver-version.revision", "15"},
                     {"nvidia.com/cuda.driver.major", "550"},
                     {"nvidia.com/cuda.driver.minor", "54"},
                     {"nvidia.com/cuda.driver.rev", "15"},
                     {"nvidia.com/gpu.count", "4"},
                     {"nvidia.com/gpu.healthy", "4"},
                     {"nvidia.com/gpu.machine", "unknown"},
                     {"nvidia.com/gpu.mode", "compute"},
                     {"nvidia.com/gpu.models", "1"},
                     {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
                     {"nvidia.com/gpu.replicas", "1"},
                     {"nvidia.com/gpu.sharing-strategy", "none"},
                     {"nvidia.com/mps.capable", "false"},
                 });
  REQUIRE(::rename((nvml + ".later").c_str(), nvml.c_str()) == 0);
  const auto complete = wait_for_label(f, "nvidia.com/gpu.memory", "40960");
  CHECK(complete == expected_labels(4, "0", "0", "false"));
  CHECK(f.logged("NVML loaded from"));
}

TEST_CASE("labels-file = \"\" writes nothing; gpu-ctk labels without a driver fails clearly") {
  require_root();
  PluginFixture f(Json{{"labels-file", ""}});
  f.start();
  CHECK(f.logged("registered with the kubelet"));
  std::this_thread::sleep_for(600ms);
  CHECK_FALSE(gcr::test::exists(f.labels_file()));

  auto env = labels_ctk_env(f);
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.dir / "broken.json";
  gcr::test::write_file(
      f.dir / "broken.json",
      Json{{"driver", {{"root", f.dir / "none"}, {"dev-root", f.dir / "none"}}}}.dump());
  const auto r = gcr::test::run(
      {gcr::test::built("gpu-ctk"), "labels", "--output", f.dir / "nfd/labels"}, env);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("gpu-ctk labels: NVIDIA driver not found") == 0);
  CHECK_FALSE(gcr::test::exists(f.dir / "nfd/labels"));
}

TEST_CASE("a GPU named with no letter or digit: nvidia.com/gpu.product=unknown-SHARED") {
  require_root();
  PluginFixture f(Json{{"replicas", 2}});
  for (const auto& gpu : f.host.gpus()) {
    const std::string info =
        f.host.dev_root() + "/proc/driver/nvidia/gpus/" + gpu.bus + "/information";
    std::string text = gcr::test::read_file(info);
    const auto model = text.find(gpu.model);
    REQUIRE(model != std::string::npos);
    gcr::test::write_file(info, text.replace(model, gpu.model.size(), "!!!"));
  }
  f.start();
  const auto labels = wait_for_label(f, "nvidia.com/gpu.product", "unknown-SHARED");
  CHECK(labels.at("nvidia.com/gpu.product") == "unknown-SHARED");
  gcr::test::check_label_syntax(labels);
  const auto printed = gcr::test::run({gcr::test::built("gpu-ctk"), "labels"}, labels_ctk_env(f));
  CHECK(printed.exit_code == 0);
  CHECK(printed.out.find("nvidia.com/gpu.product=unknown-SHARED\n") != std::string::npos);
  CHECK(printed.err.find("left out") == std::string::npos);
}
