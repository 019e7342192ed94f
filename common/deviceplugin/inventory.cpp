#include "deviceplugin/inventory.h"

#include <algorithm>

#include "base/node_stat.h"

namespace gcr {
namespace {

bool same_devices(const std::vector<PluginDevice>& a, const std::vector<PluginDevice>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const PluginDevice& x, const PluginDevice& y) {
                      return x.id == y.id && x.healthy == y.healthy && x.numa == y.numa;
                    });
}

}  // namespace

InventoryChange Inventory::refresh() {
  InventoryChange change;
  DriverHost host(config_.driver, lstat_node);  // a new one: nothing cached between ticks
  auto found = host.gpus();
  if (auto version = host.version(); !version || !found) {
    const std::string why = !version ? version.error().message : found.error().message;
    if (driver_missing_ != why) {
      change.lines.push_back(why + ": advertising " +
                             (known_.empty() ? "no devices" : "every GPU as Unhealthy") +
                             ", watching for the driver");
    }
    driver_missing_ = why;
  } else {
    if (driver_missing_) change.lines.push_back("NVIDIA driver found");
    driver_missing_.reset();
    for (const auto& gpu : *found) {
      const bool known = std::any_of(known_.begin(), known_.end(),
                                     [&](const Gpu& k) { return k.uuid == gpu.uuid; });
      if (known) continue;
      // Its index as the driver numbers it now, unless a known GPU holds that one already.
      Gpu added = gpu;
      const auto index_taken = [&](unsigned i) {
        return std::any_of(known_.begin(), known_.end(),
                           [&](const Gpu& k) { return k.index == i; });
      };
      while (index_taken(added.index)) ++added.index;
      known_.push_back(added);
      change.lines.push_back("found GPU " + std::to_string(added.index) + " " + gpu.uuid + " (" +
                             gpu.bus.to_string() + ")");
    }
    std::sort(known_.begin(), known_.end(),
              [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
  }
  std::map<std::string, std::string> failing;
  if (config_.device_plugin.health || driver_missing_) {
    failing = driver_missing_ ? std::map<std::string, std::string>() : health_.failing(known_);
    if (driver_missing_) {
      for (const auto& gpu : known_) failing.emplace(gpu.uuid, *driver_missing_);
    }
  }
  for (const auto& [uuid, why] : failing) {
    if (failing_.count(uuid) == 0) change.lines.push_back("GPU " + uuid + " is Unhealthy: " + why);
  }
  for (const auto& [uuid, why] : failing_) {
    if (failing.count(uuid) == 0) change.lines.push_back("GPU " + uuid + " is Healthy again");
  }
  failing_ = std::move(failing);
  auto devices = devices_of(known_, config_);
  for (auto& d : devices) {
    const auto it = failing_.find(d.uuid);
    d.healthy = it == failing_.end();
    if (!d.healthy) d.unhealthy_because = it->second;
  }
  change.devices_changed = !same_devices(devices, devices_);
  devices_ = std::move(devices);
  return change;
}

}  // namespace gcr
