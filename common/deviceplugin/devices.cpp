#include "deviceplugin/devices.h"

#include "base/fs.h"
#include "base/text.h"

namespace gcr {

std::optional<std::int64_t> numa_node_of(const Config::Driver& roots, const PciAddress& bus) {
  const std::string path =
      join_root(roots.dev_root, "/sys/bus/pci/devices/" + bus.to_string() + "/numa_node");
  auto text = read_regular_file(path, 64);
  if (!text) return std::nullopt;
  const auto value = trim(*text);
  if (const auto n = parse_decimal(value); n && *n < 1024) return static_cast<std::int64_t>(*n);
  return std::nullopt;  // -1: the platform has no NUMA information for it
}

std::vector<PluginDevice> devices_of(const std::vector<Gpu>& gpus, const Config& config) {
  const auto& plugin = config.device_plugin;
  std::vector<PluginDevice> out;
  for (const auto& gpu : gpus) {
    PluginDevice device;
    device.gpu_id = plugin.device_ids == "index" ? std::to_string(gpu.index) : gpu.uuid;
    device.cdi_name = config.cdi.default_kind + "=" + device.gpu_id;
    device.uuid = gpu.uuid;
    device.numa = numa_node_of(config.driver, gpu.bus);
    for (std::int64_t replica = 0; replica < plugin.replicas; ++replica) {
      device.id =
          plugin.replicas == 1 ? device.gpu_id : device.gpu_id + "::" + std::to_string(replica);
      out.push_back(device);
    }
  }
  return out;
}

std::map<std::string, const PluginDevice*> by_id(const std::vector<PluginDevice>& devices) {
  std::map<std::string, const PluginDevice*> out;
  for (const auto& d : devices) out.emplace(d.id, &d);
  return out;
}

}  // namespace gcr
