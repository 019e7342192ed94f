// The node's GPUs as the plugin knows them: found by the driver discovery the shim uses, kept
// once seen (a GPU that falls off the bus stays listed, Unhealthy, and comes back Healthy), and
// refreshed on every tick. No driver is zero devices and a reason, not an error.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "deviceplugin/devices.h"
#include "deviceplugin/health.h"
#include "driver/host.h"

namespace gcr {

struct InventoryChange {
  std::vector<std::string> lines;  // one per event, for the log
  bool devices_changed = false;
};

class Inventory {
 public:
  Inventory(const Config& config, HealthSource& health) : config_(config), health_(health) {}

  // Reads the driver again and checks every known GPU.
  InventoryChange refresh();

  [[nodiscard]] const std::vector<PluginDevice>& devices() const { return devices_; }
  [[nodiscard]] const std::vector<Gpu>& gpus() const { return known_; }

 private:
  const Config& config_;
  HealthSource& health_;
  std::vector<Gpu> known_;                      // in index order of first sight
  std::map<std::string, std::string> failing_;  // uuid -> why, as last reported
  std::optional<std::string> driver_missing_;   // why, while there is no driver
  std::vector<PluginDevice> devices_;
};

}  // namespace gcr
