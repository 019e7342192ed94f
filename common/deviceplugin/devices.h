// What the plugin advertises: devices (whole GPUs, MIG devices, and their time-slicing
// replicas), each under an extended resource, with the ID the kubelet sees, the ID and CDI
// name the runtime reads, its NUMA node and health.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "driver/device_nodes.h"
#include "driver/probe.h"

namespace gcr {

struct PluginDevice {
  std::string resource;  // nvidia.com/gpu, or nvidia.com/mig-1g.5gb with mig-strategy mixed
  std::string id;        // what the kubelet sees: the runtime's ID, then ::<n> for a replica
  std::string gpu_id;    // what the runtime reads: GPU-<uuid> | <index> | MIG-<uuid> | <gpu>:<mig>
  std::string cdi_name;  // <[cdi] default-kind>=<gpu_id>
  std::string uuid;      // the physical GPU's UUID (a MIG device's parent)
  std::optional<MigInstance> mig;    // the MIG instance, for a MIG device
  std::optional<std::int64_t> numa;  // its GPU's, from the topology; none when sysfs has none
  std::int64_t replicas = 1;         // how many times its GPU is advertised (replicas_for)
  bool healthy = true;
  std::string unhealthy_because;  // "" when healthy
  // sharing = mps: by container size k (1 to replicas), the pinned device memory the daemon for
  // containers of k shares holds them to on its GPU; none when not known (no NVML).
  std::map<std::int64_t, std::uint64_t> mps_share_mib;
};

// The devices of `gpus` (in index order; `migs` by GPU UUID, an entry for each GPU in MIG mode,
// empty when it has no MIG device yet) as [device-plugin] advertises them, all healthy.
// mig-strategy none: whole GPUs; single: every GPU's MIG devices under resource-name (whole GPUs
// when none is in MIG mode; an error unless all are, with one profile: single_layout); mixed:
// MIG devices under <domain>/mig-<profile> (not those whose compute instance is smaller than
// their GPU instance: whole_gpu_instance), GPUs not in MIG mode under resource-name.
[[nodiscard]] Result<std::vector<PluginDevice>> devices_of(
    const std::vector<Gpu>& gpus, const std::map<std::string, std::vector<MigDevice>>& migs,
    const Config& config);

// The resource a MIG profile is advertised as with mig-strategy mixed.
[[nodiscard]] std::string mig_resource(const std::string& resource_name, const MigDevice& mig);

// The devices by ID, for Allocate and GetPreferredAllocation.
[[nodiscard]] std::map<std::string, const PluginDevice*> by_id(
    const std::vector<PluginDevice>& devices);

// The devices of one resource.
[[nodiscard]] std::vector<PluginDevice> of_resource(const std::vector<PluginDevice>& devices,
                                                    const std::string& resource);

}  // namespace gcr
