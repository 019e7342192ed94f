#include "deviceplugin/allocate.h"

#include <algorithm>

#include "base/text.h"

namespace gcr {
namespace {

constexpr const char* kVisibleDevices = "NVIDIA_VISIBLE_DEVICES";
constexpr const char* kMarkerDir = "/var/run/nvidia-container-devices";

bool uses(const Config& config, const char* strategy) {
  const auto& list = config.device_plugin.device_list;
  return std::find(list.begin(), list.end(), strategy) != list.end();
}

// The devices for `ids`, each physical GPU once, in request order.
Result<std::vector<const PluginDevice*>> chosen_gpus(const std::vector<std::string>& ids,
                                                     const std::vector<PluginDevice>& devices) {
  const auto table = by_id(devices);
  std::vector<const PluginDevice*> out;
  for (const auto& id : ids) {
    const auto it = table.find(id);
    if (it == table.end()) return Error{"unknown device " + quote(id, 128)};
    if (!it->second->healthy)
      return Error{"device " + quote(id, 128) + " is unhealthy: " + it->second->unhealthy_because};
    const bool seen = std::any_of(out.begin(), out.end(), [&](const PluginDevice* d) {
      return d->gpu_id == it->second->gpu_id;
    });
    if (!seen) out.push_back(it->second);
  }
  return out;
}

}  // namespace

std::string cdi_annotation_key(const std::string& resource_name) {
  std::string name = resource_name;
  std::replace(name.begin(), name.end(), '/', '_');
  return "cdi.k8s.io/gpu-device-plugin_" + name;
}

Result<ContainerAllocation> allocate_container(const std::vector<std::string>& ids,
                                               const std::vector<PluginDevice>& devices,
                                               const Config& config) {
  auto gpus = chosen_gpus(ids, devices);
  if (!gpus) return gpus.error();
  std::vector<std::string> gpu_ids;
  std::vector<std::string> cdi_names;
  for (const auto* d : *gpus) {
    gpu_ids.push_back(d->gpu_id);
    cdi_names.push_back(d->cdi_name);
  }
  ContainerAllocation out;
  if (uses(config, "envvar")) out.envs[kVisibleDevices] = join(gpu_ids, ",");
  if (uses(config, "volume-mounts")) {
    // As NVIDIA's plugin: the variable says "see the mounts", so an image's own value
    // (NVIDIA_VISIBLE_DEVICES=all) does not select GPUs.
    out.envs[kVisibleDevices] = kMarkerDir;
    for (const auto& id : gpu_ids)
      out.mounts.emplace_back("/dev/null", std::string(kMarkerDir) + "/" + id);
  }
  if (uses(config, "cdi-annotations"))
    out.annotations[cdi_annotation_key(config.device_plugin.resource_name)] = join(cdi_names, ",");
  if (uses(config, "cdi-cri")) out.cdi_devices = cdi_names;
  return out;
}

}  // namespace gcr
