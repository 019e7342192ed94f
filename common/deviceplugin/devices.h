// What the plugin advertises: one device per GPU (per replica with time-slicing), each with
// the ID the kubelet sees, the ID and CDI name the runtime reads, its NUMA node and health.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "driver/host.h"

namespace gcr {

struct PluginDevice {
  std::string id;                    // what the kubelet sees: GPU-<uuid> or <index> (or with ::<n>)
  std::string gpu_id;                // the physical GPU as the runtime reads it (UUID or index)
  std::string cdi_name;              // <[cdi] default-kind>=<gpu_id>
  std::string uuid;                  // the GPU's UUID, whatever the ID strategy
  std::optional<std::int64_t> numa;  // from sysfs; none when it says -1 or nothing
  bool healthy = true;
  std::string unhealthy_because;  // "" when healthy
};

// <dev-root>/sys/bus/pci/devices/<bus>/numa_node: the node, or none for -1 or no file.
[[nodiscard]] std::optional<std::int64_t> numa_node_of(const Config::Driver& roots,
                                                       const PciAddress& bus);

// The devices of `gpus` (known GPUs in index order) as `config` advertises them, all healthy.
[[nodiscard]] std::vector<PluginDevice> devices_of(const std::vector<Gpu>& gpus,
                                                   const Config& config);

// The devices by ID, for Allocate and GetPreferredAllocation.
[[nodiscard]] std::map<std::string, const PluginDevice*> by_id(
    const std::vector<PluginDevice>& devices);

}  // namespace gcr
