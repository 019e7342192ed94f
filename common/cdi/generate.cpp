#include "cdi/generate.h"

#include <algorithm>
#include <map>

#include "base/text.h"
#include "driver/host_facts.h"
#include "edits/apply.h"
#include "edits/injected_hooks.h"
#include "injection/live_edits.h"
#include "request/gpu_select.h"
#include "vocabulary/imex_channel.h"

namespace gcr {
namespace {

using GpuFactsByUuid = std::map<std::string, GpuFacts>;

// What the devices are made from: the GPUs, and NVML's MIG devices of each (by GPU UUID).
struct Discovered {
  DriverHost& host;
  std::vector<Gpu> gpus;
  GpuFactsByUuid facts;
};

// Device nodes by path only: their numbers, modes and groups are read from the host when the
// spec is applied. No additionalGids either, which would raise the spec to cdiVersion 0.7.0,
// newer than Debian 12's podman reads.
void paths_only(ContainerEdits& edits) {
  for (auto& node : edits.device_nodes) {
    DeviceNode slim;
    slim.path = node.path;
    if (node.host_path != node.path) slim.host_path = node.host_path;
    node = slim;
  }
  edits.additional_gids.clear();
}

// CUDA forward compatibility: the enable-cuda-compat hook runs before the update-libraries hook
// that builds the loader cache from its drop-in.
Status add_cuda_compat_hook(ContainerEdits& edits, DriverHost& host, const Config& config) {
  if (config.requests.cuda_compat_dir.empty()) return {};
  auto version = host.devices().version();
  if (!version) return version.error();
  edits.hooks.insert(edits.hooks.begin(), enable_cuda_compat_hook(config.hooks, *version,
                                                                  config.requests.cuda_compat_dir));
  return {};
}

std::string gpu_name(const Gpu& gpu, const std::string& strategy) {
  if (strategy == "uuid") return gpu.uuid;
  if (strategy == "type-index") return "gpu" + std::to_string(gpu.index);
  return std::to_string(gpu.index);
}

// The <gpu>:<mig> ID the shim takes for a MIG device.
std::string mig_id(const Gpu& gpu, const MigDevice& mig) {
  return std::to_string(gpu.index) + ":" + std::to_string(mig.index);
}

std::string mig_name(const Gpu& gpu, const MigDevice& mig, const std::string& strategy) {
  if (strategy == "uuid") return mig.uuid;
  if (strategy == "type-index") return "mig" + mig_id(gpu, mig);
  return mig_id(gpu, mig);
}

// NVML's answers, asked only when the driver lists a MIG instance of some GPU: a host without
// MIG never loads NVML. With MIG, NVML failing is an error: the spec would lack the devices.
Result<GpuFactsByUuid> mig_facts(DriverHost& host, const std::vector<Gpu>& gpus) {
  const auto in_mig_mode = std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& gpu) {
    return !host.devices().mig_instances(gpu).empty();
  });
  if (in_mig_mode == gpus.end()) return GpuFactsByUuid{};
  auto version = host.devices().version();
  if (!version) return version.error();
  auto facts = ask_nvml(host, gpus, *version).answer;
  if (!facts)
    return facts.error().wrap("GPU " + std::to_string(in_mig_mode->index) +
                              " has MIG instances, but NVML cannot name its MIG devices");
  return facts;
}

// The device edits the shim gives a container asking for `ids` (or all GPUs), with every
// capability: the request resolved as the shim resolves it, device nodes by path only.
Result<ContainerEdits> edits_for(const std::vector<std::string>& ids, bool all,
                                 const Discovered& found) {
  GpuRequest request;
  request.all = all;
  request.device_ids = ids;
  request.capabilities = CapabilitySet::all();
  auto selected = select_gpus(request, found.gpus, &found.facts);
  if (!selected) return selected.error();
  auto edits = device_edits(request, *selected, found.host);
  if (!edits) return edits;
  paths_only(*edits);
  return edits;
}

// One device per name, each with the edits of the shim's `id`.
Status add_devices(CdiSpec& spec, const std::string& id, const std::vector<std::string>& names,
                   const Discovered& found) {
  auto edits = edits_for({id}, false, found);
  if (!edits) return edits.error();
  for (const auto& name : names) spec.devices.push_back(CdiDevice{name, {}, *edits});
  return {};
}

// A GPU's devices, then its MIG devices', one per naming strategy. A GPU the driver gives no
// UUID yet has no name by UUID (a note says so).
Status add_gpu(CdiSpec& spec, const Gpu& gpu, const CdiNaming& naming, const Discovered& found) {
  std::vector<std::string> names;
  for (const auto& strategy : naming.strategies) {
    if (strategy == "uuid" && !gpu.uuid_known()) {
      found.host.notes().add("GPU " + std::to_string(gpu.index) + " (" + gpu.bus.to_string() +
                             ") has no device named by UUID: the driver gives none until it "
                             "initialises the GPU (nvidia-persistenced does at boot); generate "
                             "the spec again then");
      continue;
    }
    names.push_back(gpu_name(gpu, strategy));
  }
  if (auto s = add_devices(spec, std::to_string(gpu.index), names, found); !s) return s;
  for (const auto& mig : mig_devices_of(gpu, found.facts)) {
    names.clear();
    for (const auto& strategy : naming.strategies) names.push_back(mig_name(gpu, mig, strategy));
    if (auto s = add_devices(spec, mig_id(gpu, mig), names, found); !s) return s;
  }
  return {};
}

// What every container of the spec gets (of every capability): the driver's files, the
// control nodes and the hooks.
Result<ContainerEdits> common_edits(DriverHost& host, const Config& config) {
  auto gathered = driver_edits(CapabilitySet::all(), host, config);
  if (!gathered) return gathered.error();
  // A CDI spec's edits are all the engine applies: the libraries request travels as its hook.
  ContainerEdits common = with_libraries_hook(std::move(*gathered), config.hooks);
  paths_only(common);
  // An engine that applies the spec itself and then runs the shim (Docker's --device or --gpus
  // as CDI, containerd's CRI) leaves the image's NVIDIA_VISIBLE_DEVICES (`all` in CUDA images)
  // for the shim to read: it would add every GPU. `void` asks for nothing, as NVIDIA's specs do.
  common.env.push_back("NVIDIA_VISIBLE_DEVICES=void");
  if (auto s = add_cuda_compat_hook(common, host, config); !s) return s.error();
  return common;
}

// Management containers act on the devices themselves: NVIDIA's management spec has neither
// the device-node modification guard nor EGL's application profile.
void drop_device_limiting_hooks(ContainerEdits& edits, const Config::Hooks& hooks) {
  std::erase_if(edits.hooks, [&](const Hook& hook) {
    const Json entry = hook_entry(hook);
    return is_device_node_modification_hook(entry, hooks) ||
           is_application_profile_hook(entry, hooks);
  });
}

// NVIDIA's character device nodes in the dev root for management containers: every
// /dev/nvidia* (GPUs, control nodes), /dev/nvidia-caps/nvidia-cap* and the IMEX channels, but
// GPUDirect Storage's, NVSwitches' and NVLinks', as NVIDIA's management spec has them.
std::vector<DeviceNode> management_nodes(DeviceNodes& devices) {
  auto nodes = devices.char_nodes("/dev", "nvidia*");
  auto caps = devices.char_nodes("/dev/nvidia-caps", "nvidia-cap*");
  auto channels = devices.char_nodes(kImexChannelDir, "channel*");
  nodes.insert(nodes.end(), caps.begin(), caps.end());
  nodes.insert(nodes.end(), channels.begin(), channels.end());
  std::erase_if(nodes, [](const DeviceNode& node) {
    const std::string name = basename_of(node.path);
    return name.starts_with("nvidia-fs") || name.starts_with("nvidia-nvswitch") ||
           name.starts_with("nvidia-nvlink");
  });
  return nodes;
}

}  // namespace

bool is_cdi_name_strategy(const std::string& strategy) {
  return strategy == "index" || strategy == "uuid" || strategy == "type-index";
}

Result<CdiSpec> generate_cdi_spec(DriverHost& host, const Config& config, const std::string& kind,
                                  const CdiNaming& naming) {
  CdiSpec spec;
  spec.kind = kind;
  auto common = common_edits(host, config);
  if (!common) return common.error();
  spec.edits = std::move(*common);
  auto gpus = host.devices().gpus();
  if (!gpus) return gpus.error();
  auto facts = mig_facts(host, *gpus);
  if (!facts) return facts.error();
  const Discovered found{host, *gpus, std::move(*facts)};
  for (const auto& gpu : found.gpus) {
    if (auto s = add_gpu(spec, gpu, naming, found); !s) return s.error();
  }
  if (!found.gpus.empty() && naming.all_device) {
    auto all = edits_for({}, true, found);
    if (!all) return all.error();
    spec.devices.push_back(CdiDevice{"all", {}, std::move(*all)});
  }
  spec.version = minimum_cdi_version(spec);
  if (auto s = validate_cdi_spec(spec); !s) return s.error().wrap("the generated spec is invalid");
  return spec;
}

Result<CdiSpec> generate_management_spec(DriverHost& host, const Config& config,
                                         const std::string& kind) {
  ContainerEdits all;
  all.device_nodes = management_nodes(host.devices());
  if (all.device_nodes.empty())
    return Error{"no NVIDIA device nodes in " + host.devices().dev_path("/dev")};
  paths_only(all);
  CdiSpec spec;
  spec.kind = kind;
  auto common = common_edits(host, config);
  if (!common) return common.error();
  drop_device_limiting_hooks(*common, config.hooks);
  common->device_nodes.clear();  // every node is the device's
  spec.edits = std::move(*common);
  spec.devices.push_back(CdiDevice{"all", {}, std::move(all)});
  spec.version = minimum_cdi_version(spec);
  if (auto s = validate_cdi_spec(spec); !s) return s.error().wrap("the generated spec is invalid");
  return spec;
}

Result<CdiSpec> generate_imex_spec(DriverHost& host, const std::string& kind) {
  const std::string dir(kImexChannelDir);
  std::map<unsigned, DeviceNode> channels;  // in channel order
  for (const auto& found : host.devices().char_nodes(dir, "channel*")) {
    const auto channel = imex_channel_of_node_name(basename_of(found.path));
    if (!channel) {
      host.notes().add("IMEX channel device left out: its name is no channel number (" +
                       found.host_path + ")");
      continue;
    }
    auto node = host.devices().imex_channel_node(*channel);
    if (!node) {
      host.notes().add("IMEX channel " + std::to_string(*channel) +
                       " left out: " + node.error().message);
      continue;
    }
    channels.emplace(*channel, std::move(*node));
  }
  if (channels.empty())
    return Error{"no usable IMEX channel in " + host.devices().dev_path(dir) +
                 " (the driver makes channel0 with NVreg_CreateImexChannel0=1)"};
  CdiSpec spec;
  spec.kind = kind;
  ContainerEdits all;
  for (auto& [channel, node] : channels) {
    ContainerEdits one;
    one.device_nodes.push_back(std::move(node));
    paths_only(one);
    all.device_nodes.push_back(one.device_nodes.front());
    spec.devices.push_back(CdiDevice{std::to_string(channel), {}, std::move(one)});
  }
  spec.devices.push_back(CdiDevice{"all", {}, std::move(all)});
  spec.version = minimum_cdi_version(spec);
  if (auto s = validate_cdi_spec(spec); !s) return s.error().wrap("the generated spec is invalid");
  return spec;
}

}  // namespace gcr
