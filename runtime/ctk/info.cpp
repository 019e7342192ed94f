// gpu-ctk info: what the runtime sees of the driver: version, CUDA version, GPUs.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "base/node_stat.h"
#include "config/config_file.h"
#include "ctk/ctk.h"
#include "doctor/mps_checks.h"
#include "driver/host.h"
#include "driver/host_facts.h"
#include "driver/nvml.h"
#include "topology/topology.h"

namespace po = boost::program_options;

namespace gcr {
namespace {

struct InfoOptions {
  Config::Driver roots;
  bool json = false;
  bool cuda = false;
  bool nvml = false;
  bool topology = false;
};

void warn(const std::string& what) {
  std::fprintf(stderr, "gpu-ctk: warning: %s\n", what.c_str());
}

Result<HostFacts> gather(const InfoOptions& options) {
  DriverHost host(options.roots, lstat_node);
  auto facts = gather_host_facts(host, HostFactsQuery{options.cuda, options.nvml});
  if (facts) {
    for (const auto& w : facts->warnings) warn(w);
  }
  return facts;
}

// The matrix gpu-device-plugin chooses GPU sets from: NVML's view when it answers, sysfs's
// otherwise.
int print_topology(const InfoOptions& options) {
  DriverHost host(options.roots, lstat_node);
  auto gpus = host.devices().gpus();
  if (!gpus) {
    std::fprintf(stderr, "gpu-ctk: %s\n", gpus.error().message.c_str());
    return 1;
  }
  std::unique_ptr<Nvml> nvml;
  if (const auto path = driver_library_path(host, Capability::kUtility, "libnvidia-ml.so")) {
    auto opened = Nvml::open(*path);
    if (opened) {
      nvml = std::move(*opened);
    } else {
      warn(opened.error().message);
    }
  }
  std::fputs(topology_table(read_topology(*gpus, options.roots, nvml.get())).c_str(), stdout);
  return 0;
}

Json optional_json(const std::optional<std::string>& v) {
  return v ? Json(*v) : Json(nullptr);
}

void print_json(const HostFacts& facts, const std::optional<Check>& mps) {
  Json out = Json::object();
  out["driver_version"] = facts.version;
  out["cuda_version"] = optional_json(facts.cuda);
  Json gpus = Json::array();
  for (const auto& gpu : facts.gpus) {
    const auto it = facts.per_gpu.find(gpu.uuid);
    const GpuFacts g = it == facts.per_gpu.end() ? GpuFacts{} : it->second;
    Json migs = Json::array();
    for (const auto& m : g.migs) {
      migs.push_back(Json{{"index", m.index},
                          {"uuid", m.uuid},
                          {"gpu_instance", m.gpu_instance},
                          {"compute_instance", m.compute_instance}});
    }
    gpus.push_back(Json{{"index", gpu.index},
                        {"minor", gpu.minor},
                        {"uuid", gpu.uuid},
                        {"bus", gpu.bus.to_string()},
                        {"model", gpu.model},
                        {"arch", optional_json(g.arch)},
                        {"brand", optional_json(g.brand)},
                        {"mig", migs}});
  }
  out["gpus"] = gpus;
  out["warnings"] = facts.warnings;  // why libcuda or NVML answered nothing, in their words
  if (mps)
    out["mps"] = Json{
        {"ok", mps->level == CheckLevel::kOk}, {"state", mps->message}, {"pipe", mps->evidence}};
  std::printf("%s\n", json_text(out, 2).c_str());
}

void print_text(const HostFacts& facts, const std::optional<Check>& mps) {
  std::printf("%-16s%s\n%-16s%s\n", "Driver version:", facts.version.c_str(),
              "CUDA version:", facts.cuda.value_or("unknown").c_str());
  if (mps) std::printf("%-16s%s (%s)\n", "MPS:", mps->message.c_str(), mps->evidence.c_str());
  for (const auto& gpu : facts.gpus) {
    const auto it = facts.per_gpu.find(gpu.uuid);
    const GpuFacts g = it == facts.per_gpu.end() ? GpuFacts{} : it->second;
    std::printf("\n%-16s%u\n%-16s%u\n%-16s%s\n%-16s%s\n%-16s%s\n%-16s%s\n%-16s%s\n",
                "Device Index:", gpu.index, "Device Minor:", gpu.minor, "Model:", gpu.model.c_str(),
                "Brand:", g.brand.value_or("unknown").c_str(), "GPU UUID:", gpu.uuid.c_str(),
                "Bus Location:", gpu.bus.to_string().c_str(),
                "Architecture:", g.arch.value_or("unknown").c_str());
  }
}

}  // namespace

int ctk_info(const std::vector<std::string>& args) {
  auto config = load_config(config_path_from_env());
  if (!config) {
    std::fprintf(stderr, "gpu-ctk: %s\n", config.error().message.c_str());
    return 1;
  }
  InfoOptions options{config->driver};
  po::options_description desc("usage: gpu-ctk info [options]\n\noptions");
  desc.add_options()("help,h", "this text")("json", po::bool_switch(&options.json), "print JSON")(
      "driver-root", po::value(&options.roots.root), "driver root (default: [driver] root)")(
      "dev-root", po::value(&options.roots.dev_root), "dev root (default: [driver] dev-root)")(
      "cuda", po::bool_switch(&options.cuda), "ask libcuda for the CUDA version")(
      "nvml", po::bool_switch(&options.nvml), "ask NVML for each GPU's architecture and brand")(
      "topology", po::bool_switch(&options.topology),
      "print how the GPUs are connected (NVLinks, PCIe, NUMA), as gpu-device-plugin sees it");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "gpu-ctk info: %s\n", e.what());
    return 2;
  }
  if (vm.count("help") != 0) {
    std::cout << desc << "\nWithout --cuda or --nvml both are asked.\n";
    return 0;
  }
  if (options.topology) return print_topology(options);
  if (!options.cuda && !options.nvml) options.cuda = options.nvml = true;
  auto facts = gather(options);
  if (!facts) {
    std::fprintf(stderr, "gpu-ctk: %s\n", facts.error().message.c_str());
    return 1;
  }
  // With sharing = "mps": what doctor finds of the daemon.
  std::optional<Check> mps;
  if (config->mps()) {
    Findings findings;
    check_mps(*config, findings);
    if (!findings.all().empty()) mps = findings.all().front();
  }
  if (options.json) {
    print_json(*facts, mps);
  } else {
    print_text(*facts, mps);
  }
  return 0;
}

}  // namespace gcr
