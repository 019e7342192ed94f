#include "deviceplugin/devices.h"

#include "mig/mig_strategy.h"

namespace gcr {
namespace {

// Each replica of a device of `gpu` (one when time-slicing is off).
void add_replicas(std::vector<PluginDevice>& out, PluginDevice device, const Gpu& gpu,
                  const Config& config) {
  const auto replicas = config.replicas_for(gpu.index, gpu.model);
  device.replicas = replicas;
  for (std::int64_t replica = 0; replica < replicas; ++replica) {
    device.id = replicas == 1 ? device.gpu_id : device.gpu_id + "::" + std::to_string(replica);
    out.push_back(device);
  }
}

PluginDevice whole_gpu(const Gpu& gpu, const Config& config) {
  PluginDevice d;
  d.resource = config.device_plugin.resource_name;
  d.gpu_id = config.device_plugin.device_ids == "index" ? std::to_string(gpu.index) : gpu.uuid;
  d.cdi_name = config.cdi.default_kind + "=" + d.gpu_id;
  d.uuid = gpu.uuid;
  return d;
}

PluginDevice mig_device(const Gpu& gpu, const MigDevice& mig, const std::string& resource,
                        const Config& config) {
  PluginDevice d = whole_gpu(gpu, config);
  d.resource = resource;
  d.gpu_id = config.device_plugin.device_ids == "index"
                 ? std::to_string(gpu.index) + ":" + std::to_string(mig.index)
                 : mig.uuid;
  d.cdi_name = config.cdi.default_kind + "=" + d.gpu_id;
  d.mig = MigInstance{mig.gpu_instance, mig.compute_instance};
  return d;
}

// The GPUs as the MIG strategies see them: in MIG mode when `migs` has an entry for them.
std::vector<MigGpu> mig_gpus(const std::vector<Gpu>& gpus,
                             const std::map<std::string, std::vector<MigDevice>>& migs) {
  std::vector<MigGpu> out;
  for (const auto& gpu : gpus) {
    const auto it = migs.find(gpu.uuid);
    out.push_back(
        MigGpu{gpu.index, gpu.uuid, it != migs.end(), it == migs.end() ? nullptr : &it->second});
  }
  return out;
}

}  // namespace

std::string mig_resource(const std::string& resource_name, const MigDevice& mig) {
  return resource_name.substr(0, resource_name.find('/')) + "/mig-" + mig.profile();
}

Result<std::vector<PluginDevice>> devices_of(
    const std::vector<Gpu>& gpus, const std::map<std::string, std::vector<MigDevice>>& migs,
    const Config& config) {
  const auto modes = mig_gpus(gpus, migs);
  std::string strategy = config.device_plugin.mig_strategy;
  if (strategy == "single") {
    const auto layout = single_layout(modes);
    if (!layout) return layout.error().wrap("mig-strategy single");
    if (*layout == SingleLayout::kWholeGpus) strategy = "none";
  }
  std::vector<PluginDevice> out;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const auto& gpu = gpus[i];
    // A GPU in MIG mode without MIG devices gives nothing: CUDA sees no device on it.
    if (strategy == "none" || !modes[i].mig_mode) {
      add_replicas(out, whole_gpu(gpu, config), gpu, config);
      continue;
    }
    for (const auto& mig : *modes[i].migs) {
      if (strategy == "mixed" && !mig.whole_gpu_instance()) continue;
      const std::string resource = strategy == "single"
                                       ? config.device_plugin.resource_name
                                       : mig_resource(config.device_plugin.resource_name, mig);
      add_replicas(out, mig_device(gpu, mig, resource, config), gpu, config);
    }
  }
  return out;
}

std::map<std::string, const PluginDevice*> by_id(const std::vector<PluginDevice>& devices) {
  std::map<std::string, const PluginDevice*> out;
  for (const auto& d : devices) out.emplace(d.id, &d);
  return out;
}

std::vector<PluginDevice> of_resource(const std::vector<PluginDevice>& devices,
                                      const std::string& resource) {
  std::vector<PluginDevice> out;
  for (const auto& d : devices) {
    if (d.resource == resource) out.push_back(d);
  }
  return out;
}

}  // namespace gcr
