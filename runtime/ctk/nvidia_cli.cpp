// nvidia-container-cli: the name containerd's `ctr run --gpus` looks up in PATH and puts in a
// hook (prestart in containerd 1.x, createRuntime in 2.1; 2.3 asks for CDI devices instead).
// With gpu-container-runtime as the runtime the shim reads that hook as the container's GPU
// request and removes it, so `configure` never runs; if it does, the container
// reached plain runc and it fails with what to change (never a half-configured container).
// `info` and `list` print what our discovery finds, in nvidia-container-cli's format.
#include <cstdio>

#include "base/node_stat.h"
#include "base/text.h"
#include "base/version.h"
#include "compat/nvidia_cli.h"
#include "config/config_file.h"
#include "ctk/ctk.h"
#include "driver/host_facts.h"
#include "driver/nvml.h"
#include "request/gpu_select.h"

namespace gcr {
namespace {

constexpr const char* kUsage =
    "usage: nvidia-container-cli [--root=PATH] [--load-kmods] ... info [--csv]\n"
    "       nvidia-container-cli [--root=PATH] list [--device=ID[,ID...]] [--libraries] "
    "[--binaries]\n"
    "                                          [--ipcs] [--firmwares] [--compat32]\n"
    "gpu-container-runtime's compatibility command: `configure` is done by the runtime itself.\n";

int fail(const std::string& msg) {
  std::fprintf(stderr, "nvidia-container-cli: %s\n", msg.c_str());
  return 1;
}

const std::string* flag_value(const std::vector<CliFlagValue>& flags, const std::string& name) {
  const std::string* found = nullptr;
  for (const auto& f : flags) {
    if (f.name == name) found = &f.value;
  }
  return found;
}

bool has_flag(const std::vector<CliFlagValue>& flags, const std::string& name) {
  return flag_value(flags, name) != nullptr;
}

int configure() {
  return fail(
      "this container was started by plain runc, which gpu-container-runtime does not configure "
      "from a hook; nothing was configured. Run it through the runtime (ctr run --runc-binary "
      "/usr/bin/gpu-container-runtime --gpus ...) or make gpu-container-runtime containerd's "
      "runtime (gpu-ctk runtime configure --runtime=containerd --set-as-default)");
}

int info(DriverHost& host, bool csv) {
  auto facts = gather_host_facts(host, HostFactsQuery{});
  if (!facts) return fail("detection error: " + facts.error().message);
  for (const auto& w : facts->warnings)
    std::fprintf(stderr, "nvidia-container-cli: %s\n", w.c_str());
  const std::string cuda = facts->cuda.value_or("N/A");
  if (csv) {
    std::printf("NVRM version,CUDA version\n%s,%s\n", facts->version.c_str(), cuda.c_str());
    std::printf("\nDevice Index,Device Minor,Model,Brand,GPU UUID,Bus Location,Architecture\n");
  } else {
    std::printf("%-15s %s\n%-15s %s\n", "NVRM version:", facts->version.c_str(),
                "CUDA version:", cuda.c_str());
  }
  for (const auto& gpu : facts->gpus) {
    const auto it = facts->per_gpu.find(gpu.uuid);
    const GpuFacts g = it == facts->per_gpu.end() ? GpuFacts{} : it->second;
    const std::string brand = g.brand.value_or("N/A");
    const std::string arch = g.arch.value_or("N/A");
    if (csv) {
      std::printf("%u,%u,%s,%s,%s,%s,%s\n", gpu.index, gpu.minor, gpu.model.c_str(), brand.c_str(),
                  gpu.uuid.c_str(), nvml_bus_id(gpu.bus).c_str(), arch.c_str());
      continue;
    }
    std::printf("\n%-15s %u\n%-15s %u\n%-15s %s\n%-15s %s\n%-15s %s\n%-15s %s\n%-15s %s\n",
                "Device Index:", gpu.index, "Device Minor:", gpu.minor, "Model:", gpu.model.c_str(),
                "Brand:", brand.c_str(), "GPU UUID:", gpu.uuid.c_str(),
                "Bus Location:", nvml_bus_id(gpu.bus).c_str(), "Architecture:", arch.c_str());
  }
  return 0;
}

std::string host_path_of(const DeviceNode& node) {
  return node.host_path.empty() ? node.path : node.host_path;
}

// The device nodes of `ids` ("all" or IDs as NVIDIA_VISIBLE_DEVICES takes them), control nodes
// first.
Result<std::vector<std::string>> device_paths(DriverHost& host, const std::string& ids) {
  GpuRequest request;
  for (auto id : split(ids, ',')) {
    const auto t = trim(id);
    if (iequals(t, "all")) {
      request.all = true;
    } else if (!t.empty()) {
      request.device_ids.emplace_back(t);
    }
  }
  auto gpus = host.devices().gpus();
  if (!gpus) return gpus.error();
  auto selected = select_gpus(request, *gpus, nullptr);
  if (!selected) return selected.error();
  auto control = host.devices().control_nodes(CapabilitySet::all());
  if (!control) return control.error();
  std::vector<std::string> out;
  for (const auto& node : *control) out.push_back(host_path_of(node));
  for (const auto& gpu : selected->gpus) {
    auto node = host.devices().gpu_node(gpu);
    if (!node) return node.error();
    out.push_back(host_path_of(*node));
  }
  return out;
}

int list(DriverHost& host, const std::vector<CliFlagValue>& flags) {
  const bool chosen = has_flag(flags, "device") || has_flag(flags, "libraries") ||
                      has_flag(flags, "binaries") || has_flag(flags, "ipcs") ||
                      has_flag(flags, "firmwares");
  const auto want = [&](const char* name) { return !chosen || has_flag(flags, name); };
  std::vector<std::string> paths;
  if (want("device")) {
    const std::string* ids = flag_value(flags, "device");
    auto nodes = device_paths(host, ids != nullptr ? *ids : "all");
    if (!nodes) return fail("device error: " + nodes.error().message);
    paths.insert(paths.end(), nodes->begin(), nodes->end());
  }
  const auto caps = CapabilitySet::all();
  if (want("binaries")) {
    for (const auto& f : host.files().binaries(caps)) paths.push_back(f.host_path);
  }
  if (want("libraries")) {
    std::vector<LibArch> arches{LibArch::k64};
    if (!chosen || has_flag(flags, "compat32")) arches.push_back(LibArch::k32);
    for (LibArch arch : arches) {
      auto libs = host.files().libraries(caps, arch);
      if (!libs) return fail("detection error: " + libs.error().message);
      for (const auto& lib : *libs) paths.push_back(lib.host_path);
    }
  }
  if (want("firmwares") && chosen) {
    for (const auto& f : host.files().firmware()) paths.push_back(f.host_path);
  }
  if (want("ipcs")) {
    for (const auto& f : host.files().ipc_endpoints(caps)) paths.push_back(f.host_path);
  }
  for (const auto& p : paths) std::printf("%s\n", p.c_str());
  return 0;
}

}  // namespace

int nvidia_container_cli(const std::vector<std::string>& args) {
  if (!args.empty() && (args.front() == "--help" || args.front() == "-h")) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (!args.empty() && (args.front() == "--version" || args.front() == "-V")) {
    std::printf("cli-version: %s (gpu-container-runtime)\n", kVersion);
    return 0;
  }
  auto line = parse_nvidia_cli(args);
  if (!line) {
    std::fprintf(stderr, "nvidia-container-cli: %s\n%s", line.error().message.c_str(), kUsage);
    return 1;
  }
  if (line->command == "configure") return configure();
  auto config = load_config(config_path_from_env());
  if (!config) return fail(config.error().message);
  Config::Driver roots = config->driver;
  if (const std::string* root = flag_value(line->global, "root"))
    roots.root = roots.dev_root = *root;
  DriverHost host(roots, lstat_node);
  if (line->command == "info") return info(host, has_flag(line->flags, "csv"));
  return list(host, line->flags);
}

}  // namespace gcr
