// gpu-ctk labels: the node's labels as gpu-device-plugin writes them (GPU Feature Discovery's
// names and meanings, NVLink sets), from the same discovery: printed, or written atomically in
// NFD's local feature-file format.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/node_stat.h"
#include "config/config_file.h"
#include "ctk/ctk.h"
#include "driver/host.h"
#include "driver/host_facts.h"
#include "driver/nvml.h"
#include "labels/labels.h"
#include "labels/labels_file.h"
#include "labels/node_facts.h"
#include "mig/mig_strategy.h"
#include "topology/topology.h"

namespace po = boost::program_options;

namespace gcr {
namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "gpu-ctk labels: %s\n", message.c_str());
  return 1;
}

// NVML from the driver root, or none (said on stderr): the labels only NVML knows are left out.
std::unique_ptr<Nvml> open_nvml(DriverHost& host) {
  const auto path = driver_library_path(host, Capability::kUtility, "libnvidia-ml.so");
  if (!path) {
    std::fprintf(stderr, "gpu-ctk labels: warning: no libnvidia-ml in the driver root\n");
    return nullptr;
  }
  auto opened = Nvml::open(*path);
  if (!opened) {
    std::fprintf(stderr, "gpu-ctk labels: warning: %s\n", opened.error().message.c_str());
    return nullptr;
  }
  return std::move(*opened);
}

// The MIG devices the plugin would list: read only with a MIG strategy (not known without NVML).
MigModes mig_devices(const std::vector<Gpu>& gpus, Nvml* nvml, const Config& config) {
  if (nvml == nullptr || config.device_plugin.mig_strategy == "none") return {};
  return read_mig_modes(*nvml, gpus);
}

// GPUs whose device node is gone or wrong (the plugin's node check; Xid events need a watch).
std::set<std::string> unhealthy_gpus(DriverHost& host, const std::vector<Gpu>& gpus) {
  std::set<std::string> out;
  for (const auto& gpu : gpus) {
    if (!host.devices().gpu_node(gpu)) out.insert(gpu.uuid);
  }
  return out;
}

Result<Labels> discover_labels(const Config& config) {
  DriverHost host(config.driver, lstat_node);
  if (auto version = host.devices().version(); !version) return version.error();
  auto gpus = host.devices().gpus();
  if (!gpus) return gpus.error();
  // As the plugin: a GPU the driver gives no UUID yet is not advertised, so not labelled.
  std::erase_if(*gpus, [](const Gpu& gpu) {
    if (gpu.uuid_known()) return false;
    std::fprintf(stderr,
                 "gpu-ctk labels: warning: GPU %u (%s) left out: the driver gives no UUID for it "
                 "until it initialises it\n",
                 gpu.index, gpu.bus.to_string().c_str());
    return true;
  });
  if (gpus->empty()) return Error{"the driver lists no GPU: no labels"};
  const auto nvml = open_nvml(host);
  const auto migs = mig_devices(*gpus, nvml.get(), config);
  const auto topology = read_topology(*gpus, config.driver, nvml.get());
  const auto unhealthy = unhealthy_gpus(host, *gpus);
  NodeFactsReader reader(config.driver);
  std::vector<std::string> left_out;
  auto labels = node_labels(reader.read(LabelSources{*gpus, migs.in_mig_mode, topology, unhealthy,
                                                     nvml.get(), nvml != nullptr}),
                            config.device_plugin, &left_out);
  for (const auto& line : left_out)
    std::fprintf(stderr, "gpu-ctk labels: warning: %s\n", line.c_str());
  return labels;
}

}  // namespace

int ctk_labels(const std::vector<std::string>& args) {
  auto config = load_config(config_path_from_env());
  if (!config) return fail(config.error().message);
  std::string output;
  po::options_description desc("usage: gpu-ctk labels [options]\n\noptions");
  desc.add_options()("help,h", "this text")(
      "output,o", po::value(&output),
      "write the labels to this file (atomically, only when they changed) instead of stdout");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "gpu-ctk labels: %s\n", e.what());
    return 2;
  }
  if (vm.count("help") != 0) {
    std::cout << desc
              << "\nPrints `name=value` lines, sorted: the labels gpu-device-plugin keeps in\n"
                 "[device-plugin] labels-file, in Node Feature Discovery's local feature-file "
                 "format.\n";
    return 0;
  }
  const auto labels = discover_labels(*config);
  if (!labels) return fail(labels.error().message);
  const std::string text = labels_text(*labels);
  if (output.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  LabelsFile file(output);
  if (auto written = file.keep(text); !written) return fail(written.error().message);
  return 0;
}

}  // namespace gcr
