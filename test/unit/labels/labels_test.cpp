// The node's labels from discovery's facts: GFD's names and meanings on each simulated
// topology, NVLink sets, sharing, MIG, a mixed node, facts NVML has not given yet, and
// Kubernetes' syntax for every label produced.
#include <doctest/doctest.h>

#include "label_checks.h"
#include "labels/labels.h"
#include "labels/nvlink_sets.h"
#include "topology_fixtures.h"

using gcr::Labels;

namespace {

gcr::GpuLabelFacts a100(unsigned i) {
  gcr::GpuLabelFacts g;
  g.uuid = "GPU-" + std::to_string(i);
  g.model = "NVIDIA A100-SXM4-40GB";
  g.arch = "8.0";
  g.memory_mib = 40960;
  g.mig_capable = true;
  g.pci_class = 0x030200;
  return g;
}

gcr::NodeLabelFacts node_of(const std::string& fixture_name) {
  const auto& fixture = gcr::test::topology_fixture(fixture_name);
  gcr::NodeLabelFacts facts;
  facts.driver_version = "550.54.15";
  facts.cuda_version = "12.4";
  facts.machine = "DGX A100";
  for (unsigned i = 0; i < fixture.gpus; ++i) {
    facts.gpus.push_back(a100(i));
    facts.gpus.back().index = i;
  }
  facts.topology = gcr::test::topology_of(fixture);
  return facts;
}

// A MIG device on an A100-SXM4-40GB, with the SMs and engines NVML gives its profile there.
gcr::MigDevice labelled_mig(unsigned index, unsigned slices, unsigned long long memory_mb) {
  gcr::MigDevice m;
  m.index = index;
  m.uuid = "MIG-" + std::to_string(index);
  m.gpu_instance = index + 1;
  m.gpu_slices = slices;
  m.memory_mb = memory_mb;
  m.attributes.compute_slices = slices;
  m.attributes.multiprocessors = 14 * slices;
  m.attributes.copy_engines = slices;
  m.attributes.decoders = slices == 3 ? 2 : 0;
  return m;
}

}  // namespace

TEST_CASE("DGX-1 mesh: GFD's labels, and NVLink sets of four, two of them") {
  const Labels expected = {
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
      {"nvidia.com/gpu.count", "8"},
      {"nvidia.com/gpu.family", "ampere"},
      {"nvidia.com/gpu.healthy", "8"},
      {"nvidia.com/gpu.machine", "DGX-A100"},
      {"nvidia.com/gpu.memory", "40960"},
      {"nvidia.com/gpu.mode", "compute"},
      {"nvidia.com/gpu.models", "1"},
      {"nvidia.com/gpu.nvlink.clique-count", "2"},
      {"nvidia.com/gpu.nvlink.largest-clique", "4"},
      {"nvidia.com/gpu.nvswitch", "false"},
      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
      {"nvidia.com/gpu.replicas", "1"},
      {"nvidia.com/gpu.sharing-strategy", "none"},
      {"nvidia.com/mig.capable", "true"},
      {"nvidia.com/mps.capable", "false"},
  };
  const auto labels = gcr::node_labels(node_of("dgx1"), gcr::Config::DevicePlugin{});
  CHECK(labels == expected);
  gcr::test::check_label_syntax(labels);
}

TEST_CASE("NVLink labels on every topology: NVSwitch, PCIe only, sixteen GPUs in a chain") {
  struct Case {
    const char* fixture;
    const char* largest;
    const char* count;
    const char* nvswitch;
  };
  for (const auto& c : {Case{"dgx1", "4", "2", "false"}, Case{"nvswitch8", "8", "1", "true"},
                        Case{"pcie4", "0", "0", "false"}, Case{"sixteen", "2", "8", "false"}}) {
    CAPTURE(c.fixture);
    const auto labels = gcr::node_labels(node_of(c.fixture), gcr::Config::DevicePlugin{});
    CHECK(labels.at("nvidia.com/gpu.nvlink.largest-clique") == c.largest);
    CHECK(labels.at("nvidia.com/gpu.nvlink.clique-count") == c.count);
    CHECK(labels.at("nvidia.com/gpu.nvswitch") == c.nvswitch);
    gcr::test::check_label_syntax(labels);
  }
}

TEST_CASE("NVLink sets: the largest cliques, counted without sharing a GPU") {
  // Fifteen GPUs, every pair linked except within five triangles: 243 largest sets of five,
  // at most three of them disjoint.
  gcr::Topology t;
  t.nvlinks.assign(15, std::vector<int>(15, 0));
  for (std::size_t i = 0; i < 15; ++i) {
    for (std::size_t j = 0; j < 15; ++j) t.nvlinks[i][j] = i != j && i / 3 != j / 3 ? 1 : 0;
  }
  std::vector<std::size_t> all(15);
  for (std::size_t i = 0; i < 15; ++i) all[i] = i;
  const auto sets = gcr::nvlink_sets(t, all);
  CHECK(sets.largest == 5);
  CHECK(sets.count == 3);
  // A triangle and a lone GPU.
  gcr::Topology small;
  small.nvlinks = {{0, 1, 1, 0}, {1, 0, 1, 0}, {1, 1, 0, 0}, {0, 0, 0, 0}};
  const auto tri = gcr::nvlink_sets(small, {0, 1, 2, 3});
  CHECK(tri.largest == 3);
  CHECK(tri.count == 1);
  CHECK(gcr::nvlink_sets(small, {2, 3}).largest == 0);
  CHECK_FALSE(gcr::all_on_nvswitch(small, {}));
}

TEST_CASE("an Unhealthy GPU leaves the NVLink sets and the healthy count") {
  auto facts = node_of("dgx1");
  facts.gpus[3].healthy = false;
  const auto labels = gcr::node_labels(facts, gcr::Config::DevicePlugin{});
  CHECK(labels.at("nvidia.com/gpu.count") == "8");
  CHECK(labels.at("nvidia.com/gpu.healthy") == "7");
  CHECK(labels.at("nvidia.com/gpu.nvlink.largest-clique") == "4");
  CHECK(labels.at("nvidia.com/gpu.nvlink.clique-count") == "1");
}

TEST_CASE("before NVML answers: what the driver's files say, nothing guessed") {
  auto facts = node_of("pcie4");
  facts.cuda_version.reset();
  facts.topology.reset();
  facts.machine.reset();
  for (auto& g : facts.gpus) {
    g.arch.reset();
    g.memory_mib.reset();
    g.mig_capable.reset();
  }
  const Labels expected = {
      {"nvidia.com/cuda.driver-version.full", "550.54.15"},
      {"nvidia.com/cuda.driver-version.major", "550"},
      {"nvidia.com/cuda.driver-version.minor", "54"},
      {"nvidia.com/cuda.driver-version.revision", "15"},
      {"nvidia.com/cuda.driver.major", "550"},
      {"nvidia.com/cuda.driver.minor", "54"},
      {"nvidia.com/cuda.driver.rev", "15"},
      {"nvidia.com/gpu.count", "4"},
      {"nvidia.com/gpu.healthy", "4"},
      {"nvidia.com/gpu.machine", "unknown"},  // GFD's, where DMI cannot be read
      {"nvidia.com/gpu.mode", "compute"},
      {"nvidia.com/gpu.models", "1"},
      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
      {"nvidia.com/gpu.replicas", "1"},
      {"nvidia.com/gpu.sharing-strategy", "none"},
      {"nvidia.com/mps.capable", "false"},
  };
  CHECK(gcr::node_labels(facts, gcr::Config::DevicePlugin{}) == expected);
}

TEST_CASE("time-slicing: -SHARED on the product, replicas are one GPU's, as GFD writes them") {
  gcr::Config::DevicePlugin plugin;
  plugin.replicas = 4;
  const auto labels = gcr::node_labels(node_of("pcie4"), plugin);
  CHECK(labels.at("nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-40GB-SHARED");
  CHECK(labels.at("nvidia.com/gpu.count") == "4");
  CHECK(labels.at("nvidia.com/gpu.replicas") == "4");
  CHECK(labels.at("nvidia.com/gpu.sharing-strategy") == "time-slicing");
  CHECK(gcr::sharing_strategy(plugin) == "time-slicing");
}

TEST_CASE("MIG single: the MIG devices are the GPUs; mixed: labels per profile") {
  auto facts = node_of("pcie4");
  for (auto& g : facts.gpus) g.migs = {labelled_mig(0, 1, 4864), labelled_mig(1, 1, 4864)};
  gcr::Config::DevicePlugin plugin;
  plugin.mig_strategy = "single";
  auto labels = gcr::node_labels(facts, plugin);
  CHECK(labels.at("nvidia.com/mig.strategy") == "single");
  CHECK(labels.at("nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb");
  CHECK(labels.at("nvidia.com/gpu.count") == "8");
  CHECK(labels.at("nvidia.com/gpu.memory") == "4864");

  facts.gpus[0].migs = {labelled_mig(0, 3, 20096)};
  facts.gpus[2].migs.clear();
  facts.gpus[3].migs.clear();
  plugin.mig_strategy = "mixed";
  plugin.replicas = 2;
  labels = gcr::node_labels(facts, plugin);
  // GFD counts every GPU, those in MIG mode too; replicas and sharing are one device's.
  CHECK(labels.at("nvidia.com/gpu.count") == "4");
  CHECK(labels.at("nvidia.com/gpu.replicas") == "2");
  CHECK(labels.at("nvidia.com/gpu.sharing-strategy") == "time-slicing");
  CHECK(labels.at("nvidia.com/mig-1g.5gb.count") == "2");
  CHECK(labels.at("nvidia.com/mig-1g.5gb.replicas") == "2");
  CHECK(labels.at("nvidia.com/mig-1g.5gb.sharing-strategy") == "time-slicing");
  CHECK(labels.at("nvidia.com/mig-1g.5gb.memory") == "4864");
  CHECK(labels.at("nvidia.com/mig-1g.5gb.product") == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED");
  CHECK(labels.at("nvidia.com/mig-3g.20gb.count") == "1");
  gcr::test::check_label_syntax(labels);

  // mixed with every GPU in MIG mode: no nvidia.com/gpu device is advertised, and GFD still
  // describes the GPUs (pods asking for a MIG profile select on their product and family),
  // unshared: replicas 0.
  auto every_gpu_mig = facts;
  for (auto& g : every_gpu_mig.gpus) g.migs = {labelled_mig(0, 1, 4864)};
  const auto all_mig = gcr::node_labels(every_gpu_mig, plugin);
  const Labels whole = {{"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"},
                        {"nvidia.com/gpu.count", "4"},
                        {"nvidia.com/gpu.replicas", "0"},
                        {"nvidia.com/gpu.sharing-strategy", "none"},
                        {"nvidia.com/gpu.memory", "40960"},
                        {"nvidia.com/gpu.family", "ampere"},
                        {"nvidia.com/gpu.compute.major", "8"}};
  for (const auto& label : whole)
    CHECK_MESSAGE(all_mig.at(label.first) == label.second, label.first);
  CHECK(all_mig.at("nvidia.com/mig-1g.5gb.count") == "4");
  CHECK(all_mig.at("nvidia.com/mig-1g.5gb.product") == "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED");
  CHECK(all_mig.at("nvidia.com/gpu.models") == "1");
  CHECK(all_mig.at("nvidia.com/mig.capable") == "true");

  // single with GPUs not laid out for it (here: several profiles, and GPUs not in MIG mode):
  // the plugin advertises nothing, and GFD's "-MIG-INVALID" product says so, every count 0.
  plugin.mig_strategy = "single";
  labels = gcr::node_labels(facts, plugin);
  CHECK(labels.at("nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-40GB-MIG-INVALID");
  CHECK(labels.at("nvidia.com/gpu.count") == "0");
  CHECK(labels.at("nvidia.com/gpu.replicas") == "0");
  CHECK(labels.at("nvidia.com/gpu.memory") == "0");
  CHECK(labels.at("nvidia.com/gpu.family") == "ampere");
  CHECK(labels.count("nvidia.com/gpu.multiprocessors") == 0);
  // GFD's labels of the whole GPUs under its invalid ones: their sharing (2 replicas here).
  CHECK(labels.at("nvidia.com/gpu.sharing-strategy") == "time-slicing");
  gcr::test::check_label_syntax(labels);
  // Every GPU in MIG mode, profiles mixed: no whole GPU shared.
  auto two_profiles = facts;
  for (auto& g : two_profiles.gpus) g.migs = {labelled_mig(0, 1, 4864), labelled_mig(1, 3, 19968)};
  labels = gcr::node_labels(two_profiles, plugin);
  CHECK(labels.at("nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-40GB-MIG-INVALID");
  CHECK(labels.at("nvidia.com/gpu.sharing-strategy") == "none");
}

TEST_CASE("MIG: GFD's labels of a MIG device's share, under single and per profile under mixed") {
  auto facts = node_of("pcie4");
  for (auto& g : facts.gpus) g.migs = {labelled_mig(0, 3, 20096), labelled_mig(1, 3, 20096)};
  gcr::Config::DevicePlugin plugin;
  plugin.mig_strategy = "single";
  const auto single = gcr::node_labels(facts, plugin);
  const Labels share = {
      {"nvidia.com/gpu.count", "8"},
      {"nvidia.com/gpu.engines.copy", "3"},
      {"nvidia.com/gpu.engines.decoder", "2"},
      {"nvidia.com/gpu.engines.encoder", "0"},
      {"nvidia.com/gpu.engines.jpeg", "0"},
      {"nvidia.com/gpu.engines.ofa", "0"},
      {"nvidia.com/gpu.memory", "20096"},
      {"nvidia.com/gpu.multiprocessors", "42"},
      {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-3g.20gb"},
      {"nvidia.com/gpu.replicas", "1"},
      {"nvidia.com/gpu.slices.ci", "3"},
      {"nvidia.com/gpu.slices.gi", "3"},
  };
  for (const auto& label : share) {
    const std::string& name = label.first;
    CAPTURE(name);
    CHECK(single.at(name) == label.second);
  }

  facts.gpus[1].migs = {labelled_mig(0, 1, 4864)};
  plugin.mig_strategy = "mixed";
  const auto mixed = gcr::node_labels(facts, plugin);
  CHECK(mixed.at("nvidia.com/mig-3g.20gb.multiprocessors") == "42");
  CHECK(mixed.at("nvidia.com/mig-3g.20gb.engines.decoder") == "2");
  CHECK(mixed.at("nvidia.com/mig-1g.5gb.multiprocessors") == "14");
  CHECK(mixed.at("nvidia.com/mig-1g.5gb.slices.gi") == "1");
  CHECK(mixed.at("nvidia.com/mig-1g.5gb.slices.ci") == "1");
  CHECK(mixed.at("nvidia.com/mig-1g.5gb.engines.copy") == "1");
  CHECK(mixed.at("nvidia.com/mig-1g.5gb.engines.ofa") == "0");
  CHECK(mixed.count("nvidia.com/gpu.multiprocessors") == 0);
  gcr::test::check_label_syntax(mixed);

  // A compute instance smaller than its GPU instance is no resource under mixed (NVIDIA's
  // plugin skips it), so GFD's labels do not count or describe it either.
  auto small_compute = labelled_mig(2, 3, 20096);
  small_compute.attributes.compute_slices = 1;
  facts.gpus[2].migs.push_back(small_compute);
  const auto skipped = gcr::node_labels(facts, plugin);
  CHECK(skipped.at("nvidia.com/mig-3g.20gb.count") == "6");
  for (const auto& label : skipped) CHECK(label.first.find("1c.3g") == std::string::npos);
}

TEST_CASE("MIG single while the GPUs' MIG modes are not known: nvidia.com/gpu not described") {
  // The plugin advertises nothing then (NVML not loaded yet): labels saying four whole GPUs
  // would bring pods here that wait.
  auto facts = node_of("pcie4");
  facts.mig_modes_known = false;
  gcr::Config::DevicePlugin plugin;
  plugin.mig_strategy = "single";
  auto labels = gcr::node_labels(facts, plugin);
  for (const char* name : {"nvidia.com/gpu.product", "nvidia.com/gpu.count",
                           "nvidia.com/gpu.replicas", "nvidia.com/gpu.memory"})
    CHECK_MESSAGE(labels.count(name) == 0, name);
  CHECK(labels.at("nvidia.com/gpu.models") == "1");
  plugin.mig_strategy = "mixed";  // mixed lists the GPUs whole meanwhile, as the plugin does
  CHECK(gcr::node_labels(facts, plugin).at("nvidia.com/gpu.count") == "4");
}

TEST_CASE("replicas by GPU follow the plugin's GPU numbers, also per MIG profile") {
  auto facts = node_of("pcie4");
  facts.gpus.erase(facts.gpus.begin(), facts.gpus.begin() + 2);  // GPUs 2 and 3 keep theirs
  facts.gpus[0].index = 2;
  facts.gpus[1].index = 3;
  gcr::Config::DevicePlugin plugin;
  plugin.replicas_by_gpu = {{"2", 4}};
  CHECK(gcr::node_labels(facts, plugin).at("nvidia.com/gpu.replicas") == "4");
  for (auto& g : facts.gpus) g.migs = {labelled_mig(0, 1, 4864)};
  plugin.mig_strategy = "mixed";
  CHECK(gcr::node_labels(facts, plugin).at("nvidia.com/mig-1g.5gb.replicas") == "4");
}

TEST_CASE("MIG single with no GPU in MIG mode is none; a GPU in MIG mode with nothing made") {
  auto facts = node_of("pcie4");
  gcr::Config::DevicePlugin plugin;
  plugin.mig_strategy = "single";
  // No GPU in MIG mode: whole GPUs, as the plugin advertises them.
  auto labels = gcr::node_labels(facts, plugin);
  CHECK(labels.at("nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-40GB");
  CHECK(labels.at("nvidia.com/gpu.count") == "4");
  CHECK(labels.at("nvidia.com/gpu.memory") == "40960");

  // GPU 3 in MIG mode with no MIG device yet: single is not laid out; mixed counts it nowhere.
  for (auto& g : facts.gpus) g.migs = {labelled_mig(0, 1, 4864)};
  facts.gpus[3].migs.clear();
  facts.gpus[3].mig_mode = true;
  labels = gcr::node_labels(facts, plugin);
  CHECK(labels.at("nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-40GB-MIG-INVALID");
  CHECK(labels.at("nvidia.com/gpu.count") == "0");
  plugin.mig_strategy = "mixed";
  labels = gcr::node_labels(facts, plugin);
  CHECK(labels.at("nvidia.com/gpu.count") == "4");
  CHECK(labels.at("nvidia.com/gpu.replicas") == "0");
  CHECK(labels.at("nvidia.com/mig-1g.5gb.count") == "3");
}

TEST_CASE("a mixed node: single-valued labels describe GPU 0, gpu.models says it is mixed") {
  auto facts = node_of("pcie4");
  facts.gpus[2].model = "Tesla V100-SXM2-32GB";
  facts.gpus[2].arch = "7.0";
  facts.gpus[2].mig_capable = false;
  const auto labels = gcr::node_labels(facts, gcr::Config::DevicePlugin{});
  CHECK(labels.at("nvidia.com/gpu.product") == "NVIDIA-A100-SXM4-40GB");
  CHECK(labels.at("nvidia.com/gpu.family") == "ampere");
  CHECK(labels.at("nvidia.com/gpu.models") == "2");
  CHECK(labels.at("nvidia.com/mig.capable") == "true");
  for (auto& g : facts.gpus) g.mig_capable = false;
  CHECK(gcr::node_labels(facts, gcr::Config::DevicePlugin{}).at("nvidia.com/mig.capable") ==
        "false");
}

// The H200 host's driver (580.159.04, CUDA 13.0): the revision keeps its leading zero, under
// GFD's older names as under its newer ones.
TEST_CASE("driver 580.159.04 with CUDA 13.0: both sets of GFD's CUDA labels") {
  auto facts = node_of("dgx1");
  facts.driver_version = "580.159.04";
  facts.cuda_version = "13.0";
  const auto labels = gcr::node_labels(facts, gcr::Config::DevicePlugin{});
  CHECK(labels.at("nvidia.com/cuda.driver.major") == "580");
  CHECK(labels.at("nvidia.com/cuda.driver.minor") == "159");
  CHECK(labels.at("nvidia.com/cuda.driver.rev") == "04");
  CHECK(labels.at("nvidia.com/cuda.driver-version.revision") == "04");
  CHECK(labels.at("nvidia.com/cuda.driver-version.full") == "580.159.04");
  CHECK(labels.at("nvidia.com/cuda.runtime.major") == "13");
  CHECK(labels.at("nvidia.com/cuda.runtime.minor") == "0");
  CHECK(labels.at("nvidia.com/cuda.runtime-version.full") == "13.0");
  CHECK(labels.count("nvidia.com/cuda.driver.full") == 0);
  CHECK(labels.count("nvidia.com/cuda.runtime.full") == 0);
}

// GFD's gpu.mode from the PCI class: a 3D controller computes, a VGA controller (a workstation
// card with its display on) is graphics; a class not read, or not one for all, is unknown.
TEST_CASE("gpu.mode: compute, graphics or unknown from the GPUs' PCI class") {
  auto facts = node_of("pcie4");
  const auto mode = [&] {
    return gcr::node_labels(facts, gcr::Config::DevicePlugin{}).at("nvidia.com/gpu.mode");
  };
  CHECK(mode() == "compute");
  for (auto& g : facts.gpus) g.pci_class = 0x030000;
  CHECK(mode() == "graphics");
  facts.gpus[2].pci_class = 0x030200;
  CHECK(mode() == "unknown");
  for (auto& g : facts.gpus) g.pci_class = 0x030200;
  facts.gpus[3].pci_class.reset();
  CHECK(mode() == "unknown");
  for (auto& g : facts.gpus) g.pci_class = 0x038000;  // another display controller
  CHECK(mode() == "unknown");
}

TEST_CASE("gpu.clique: the one fabric clique of the GPUs attached to a multi-node NVLink") {
  auto facts = node_of("nvswitch8");
  const std::string clique = "6b1f4a2e-93c7-4d0e-8a55-2f9e1c7b3d40.32766";
  std::vector<std::string> said;
  const auto labels = [&] {
    said.clear();
    return gcr::node_labels(facts, gcr::Config::DevicePlugin{}, &said);
  };
  CHECK_FALSE(labels().contains("nvidia.com/gpu.clique"));  // no fabric (an HGX board)
  for (auto& g : facts.gpus) g.fabric_clique = clique;
  facts.gpus[5].fabric_clique.reset();  // still registering, or not attached
  auto attached = labels();
  CHECK(attached.at("nvidia.com/gpu.clique") == clique);
  CHECK(said.empty());
  gcr::test::check_label_syntax(attached);
  // A GPU NVML did not answer for may be in another clique: no label for now.
  facts.gpus[5].fabric_known = false;
  CHECK_FALSE(labels().contains("nvidia.com/gpu.clique"));
  CHECK(said.empty());
  facts.gpus[5].fabric_known = true;
  facts.gpus[6].fabric_clique = "6b1f4a2e-93c7-4d0e-8a55-2f9e1c7b3d40.7";
  CHECK_FALSE(labels().contains("nvidia.com/gpu.clique"));
  REQUIRE(said.size() == 1);
  CHECK(said[0] ==
        "label nvidia.com/gpu.clique left out: the GPUs are in 2 fabric cliques "
        "(6b1f4a2e-93c7-4d0e-8a55-2f9e1c7b3d40.32766, 6b1f4a2e-93c7-4d0e-8a55-2f9e1c7b3d40.7)");
}

TEST_CASE("every value is sanitised to Kubernetes' syntax, whatever the driver reports") {
  auto facts = node_of("dgx1");
  facts.driver_version = "550.54.15-custom+build (debug)";
  facts.cuda_version = "12.4";
  facts.machine = "  ProLiant DL380 Gen10 (HPE) \t";
  facts.gpus[0].model = "  NVIDIA GeForce RTX 4090 (TCC) " + std::string(80, 'x') + "!!";
  for (const auto replicas : {1, 7}) {
    gcr::Config::DevicePlugin plugin;
    plugin.replicas = replicas;
    const auto labels = gcr::node_labels(facts, plugin);
    gcr::test::check_label_syntax(labels);
    CHECK(labels.at("nvidia.com/gpu.machine") == "ProLiant-DL380-Gen10-HPE");
    CHECK(labels.at("nvidia.com/cuda.driver-version.revision") == "15-custombuild-debug");
    CHECK(labels.at("nvidia.com/gpu.product").size() <= 63);
  }
  facts.machine = "()";  // nothing left: empty, as GFD's sanitise leaves it
  CHECK(gcr::node_labels(facts, gcr::Config::DevicePlugin{}).at("nvidia.com/gpu.machine") == "");
  // A two-part driver version: the revisions empty, as GFD writes them.
  facts.driver_version = "550.120";
  const auto two_parts = gcr::node_labels(facts, gcr::Config::DevicePlugin{});
  CHECK(two_parts.at("nvidia.com/cuda.driver-version.minor") == "120");
  CHECK(two_parts.at("nvidia.com/cuda.driver-version.revision") == "");
  CHECK(two_parts.at("nvidia.com/cuda.driver.rev") == "");
  CHECK(two_parts.at("nvidia.com/cuda.driver-version.full") == "550.120");
  CHECK(gcr::label_value("NVIDIA A100-SXM4-40GB") == "NVIDIA-A100-SXM4-40GB");
  CHECK(gcr::label_value("-a  b_") == "a-b");
  CHECK(gcr::label_value("A\tB\nC D") == "ABC-D");  // GFD drops tabs and newlines; spaces are '-'
  CHECK(gcr::label_value("ü") == "");
  CHECK(gcr::label_value(std::string(70, 'a')) == std::string(63, 'a'));
}

TEST_CASE("Kubernetes' label syntax") {
  CHECK(gcr::is_label_name("nvidia.com/gpu.product"));
  CHECK(gcr::is_label_name("gpu.product"));
  CHECK(gcr::is_label_name("a"));
  CHECK(gcr::is_label_name("nvidia.com/" + std::string(63, 'a')));
  CHECK_FALSE(gcr::is_label_name("nvidia.com/" + std::string(64, 'a')));
  CHECK_FALSE(gcr::is_label_name(std::string(254, 'a') + "/x"));
  CHECK_FALSE(gcr::is_label_name("Nvidia.com/gpu"));
  CHECK_FALSE(gcr::is_label_name("nvidia..com/gpu"));
  CHECK_FALSE(gcr::is_label_name("nvidia.com/"));
  CHECK_FALSE(gcr::is_label_name("nvidia.com/-gpu"));
  CHECK_FALSE(gcr::is_label_name("nvidia.com/gpu count"));
  CHECK_FALSE(gcr::is_label_name(""));
  CHECK(gcr::is_label_value(""));
  CHECK(gcr::is_label_value("NVIDIA-A100_SXM4.40GB"));
  CHECK_FALSE(gcr::is_label_value("-x"));
  CHECK_FALSE(gcr::is_label_value("x."));
  CHECK_FALSE(gcr::is_label_value("a b"));
  CHECK_FALSE(gcr::is_label_value(std::string(64, 'a')));
}

TEST_CASE("GFD's architecture families") {
  CHECK(gcr::gpu_family(3, 7) == "kepler");
  CHECK(gcr::gpu_family(6, 0) == "pascal");
  CHECK(gcr::gpu_family(7, 0) == "volta");
  CHECK(gcr::gpu_family(7, 5) == "turing");
  CHECK(gcr::gpu_family(8, 6) == "ampere");
  CHECK(gcr::gpu_family(8, 9) == "ada-lovelace");
  CHECK(gcr::gpu_family(9, 0) == "hopper");
  CHECK(gcr::gpu_family(10, 0) == "blackwell");
  CHECK(gcr::gpu_family(12, 0) == "blackwell");
  CHECK(gcr::gpu_family(4, 0) == "undefined");
}

TEST_CASE("the feature file: name=value lines, sorted") {
  CHECK(gcr::labels_text({{"b/x", "2"}, {"a/y", ""}}) == "a/y=\nb/x=2\n");
}

TEST_CASE("a GPU name with no letter or digit: the product is unknown, every label valid") {
  struct Case {
    std::string model;
    const char* product;
    const char* shared;
  };
  const std::string long_name = std::string(60, 'A') + std::string(40, 'b');  // 100 characters
  const std::vector<Case> cases = {
      {"!!!", "unknown", "unknown-SHARED"},
      {"-", "unknown", "unknown-SHARED"},
      {"", "unknown", "unknown-SHARED"},
      {"\xc3\xbc\xe2\x84\xa2", "unknown", "unknown-SHARED"},  // "ü™": nothing ASCII
      {"NVIDIA \xef\xbc\xa8\xef\xbc\x91\xef\xbc\x90\xef\xbc\x90 (\xc3\xa9)", "NVIDIA",
       "NVIDIA-SHARED"},  // "NVIDIA Ｈ１００ (é)"
      // As GFD's sanitise: a character outside [A-Za-z0-9-_. ] dropped (the no-break space),
      // each run of blanks one '-'.
      {"  Tesla\xc2\xa0V100--PCIe__", "TeslaV100--PCIe", "TeslaV100--PCIe-SHARED"},
      {"Quadro RTX 6000/8000 (TM) \xc2\xae  \"x\"=y#z", "Quadro-RTX-60008000-TM-xyz",
       "Quadro-RTX-60008000-TM-xyz-SHARED"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.model);
    auto facts = node_of("pcie4");
    for (auto& g : facts.gpus) g.model = c.model;
    for (const auto replicas : {1, 4}) {
      CAPTURE(replicas);
      gcr::Config::DevicePlugin plugin;
      plugin.replicas = replicas;
      std::vector<std::string> left_out;
      const auto labels = gcr::node_labels(facts, plugin, &left_out);
      CHECK(labels.at("nvidia.com/gpu.product") == (replicas > 1 ? c.shared : c.product));
      CHECK(left_out.empty());
      gcr::test::check_label_syntax(labels);
    }
    gcr::Config::DevicePlugin mps;
    mps.sharing = "mps";
    mps.replicas = 2;
    gcr::test::check_label_syntax(gcr::node_labels(facts, mps));
  }

  // A hundred characters: cut to 63, or to 56 and "-SHARED" kept whole.
  auto facts = node_of("pcie4");
  facts.gpus[0].model = long_name;
  gcr::Config::DevicePlugin plugin;
  CHECK(gcr::node_labels(facts, plugin).at("nvidia.com/gpu.product") == long_name.substr(0, 63));
  plugin.replicas = 2;
  const auto shared = gcr::node_labels(facts, plugin).at("nvidia.com/gpu.product");
  CHECK(shared == long_name.substr(0, 56) + "-SHARED");
  CHECK(shared.size() == 63);
  // Cut where a run of other characters was: the end trimmed to an alphanumeric first.
  facts.gpus[0].model = std::string(55, 'x') + " (" + std::string(40, 'y') + ")";
  CHECK(gcr::node_labels(facts, plugin).at("nvidia.com/gpu.product") ==
        std::string(55, 'x') + "-SHARED");
  gcr::test::check_label_syntax(gcr::node_labels(facts, plugin));

  // MIG: the profile after the unknown name, and per profile under mixed.
  facts = node_of("pcie4");
  for (auto& g : facts.gpus) {
    g.model = "!!!";
    g.migs = {labelled_mig(0, 1, 4864)};
  }
  plugin.mig_strategy = "single";
  CHECK(gcr::node_labels(facts, plugin).at("nvidia.com/gpu.product") ==
        "unknown-MIG-1g.5gb-SHARED");
  plugin.mig_strategy = "mixed";
  const auto mixed = gcr::node_labels(facts, plugin);
  CHECK(mixed.at("nvidia.com/mig-1g.5gb.product") == "unknown-MIG-1g.5gb-SHARED");
  gcr::test::check_label_syntax(mixed);
}

TEST_CASE("a label Kubernetes would refuse is left out and said, never written") {
  Labels labels = {{"nvidia.com/gpu.product", "-SHARED"},
                   {"nvidia.com/gpu.count", "4"},
                   {"nvidia.com/gpu.machine", std::string(64, 'a')},
                   {"nvidia.com/bad name", "1"},
                   {"nvidia.com/gpu.empty", ""}};
  const auto lines = gcr::drop_invalid_labels(labels);
  CHECK(labels == Labels{{"nvidia.com/gpu.count", "4"}, {"nvidia.com/gpu.empty", ""}});
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] == "label left out, not valid in Kubernetes: `nvidia.com/bad name=1`");
  CHECK(lines[2] == "label left out, not valid in Kubernetes: `nvidia.com/gpu.product=-SHARED`");
  CHECK(gcr::drop_invalid_labels(labels).empty());
}
