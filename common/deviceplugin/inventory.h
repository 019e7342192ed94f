// The node's GPUs as the plugin knows them: found by the driver discovery the shim uses, kept
// once seen (a GPU that falls off the bus stays listed, Unhealthy, and comes back Healthy), MIG
// devices from NVML (read again when the driver's MIG layout changes), the topology (read
// when the set of GPUs changes), and health from the node (device nodes, /proc) and from
// critical Xid events (until NVML sees the GPU reset). No driver is zero devices and a reason,
// not an error.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "deviceplugin/devices.h"
#include "deviceplugin/health.h"
#include "driver/device_nodes.h"
#include "driver/nvml.h"
#include "topology/topology.h"

namespace gcr {

struct InventoryChange {
  std::vector<std::string> lines;  // one per event, for the log
  bool devices_changed = false;
  bool gpus_changed = false;      // the set of known GPUs (for the topology and Xid watching)
  bool topology_changed = false;  // read again: the preferred allocations change with it
};

class Inventory {
 public:
  Inventory(const Config& config, HealthSource& health) : config_(config), health_(health) {}

  // Reads the driver again and checks every known GPU. `nvml` (may be null) answers MIG and
  // topology questions.
  InventoryChange refresh(Nvml* nvml);
  // A critical Xid (one not ignored): the GPU, or its MIG instance, turns Unhealthy.
  InventoryChange apply_xid(const XidEvent& event);
  // NVML's wait for Xid events failed (`why`), or works again (nullopt). While it fails every
  // GPU is Unhealthy, as NVIDIA's plugin has them (a lost GPU may say no more than that), and
  // Healthy again once it answers, where NVIDIA's keeps them Unhealthy until it restarts.
  InventoryChange apply_xid_wait_failure(const std::optional<std::string>& why);
  // NVML became available: the topology and the MIG devices are read again with it.
  InventoryChange use_nvml(Nvml& nvml);
  // GPUs an Xid took that NVML saw stop answering and answer again (a reset) are Healthy.
  InventoryChange check_resets(Nvml& nvml);

  [[nodiscard]] const std::vector<PluginDevice>& devices() const { return devices_; }
  [[nodiscard]] const std::vector<Gpu>& gpus() const { return known_; }
  // Whether the driver lists GPUs with no UUID yet (left out of gpus() until they have one).
  [[nodiscard]] bool awaiting_uuid() const { return !without_uuid_.empty(); }
  [[nodiscard]] const Topology& topology() const { return topology_; }
  // MIG devices by GPU UUID, as NVML listed them (with a MIG strategy): an entry, maybe empty,
  // for each GPU in MIG mode.
  [[nodiscard]] const std::map<std::string, std::vector<MigDevice>>& migs() const { return migs_; }
  // Whether the GPUs' MIG modes are known (NVML was there to ask), with a MIG strategy.
  [[nodiscard]] bool mig_modes_known() const { return !migs_unknown_; }
  // The GPUs (by UUID) that are Unhealthy as a whole: the node or the driver lost them, or a
  // critical Xid on the GPU (not on one MIG instance) took them.
  [[nodiscard]] std::set<std::string> unhealthy_gpus() const;
  // Every resource advertised (always resource-name, even with no device).
  [[nodiscard]] std::set<std::string> resources() const;

 private:
  struct XidFailure {
    std::optional<MigInstance> mig;  // one MIG instance, or the whole GPU
    std::string why;
  };
  struct XidFailures {
    std::vector<XidFailure> failures;  // one per instance hit (or the whole GPU)
    bool seen_lost = false;            // NVML stopped answering since (a reset under way)
  };

  void discover(DeviceNodes& nodes, Nvml* nvml, InventoryChange& change);
  void read_mig_layout(DeviceNodes& nodes, Nvml* nvml, InventoryChange& change);
  // The devices listed again; what changed and why added to `change`.
  void relist(InventoryChange& change);

  const Config& config_;
  HealthSource& health_;
  std::vector<Gpu> known_;                              // in index order of first sight
  std::map<std::string, std::vector<MigDevice>> migs_;  // by GPU UUID, each GPU in MIG mode
  bool migs_unknown_ = false;                           // NVML was not there to ask
  std::string mig_layout_;                              // what proc lists, to notice changes
  std::string mig_error_;
  Topology topology_;
  std::map<std::string, std::string> node_failing_;  // uuid -> why (device node, /proc)
  std::map<std::string, XidFailures> xid_failing_;   // uuid -> the Xids that took it
  std::optional<std::string> xid_wait_failing_;      // why NVML's event wait fails
  std::optional<std::string> driver_missing_;        // why, while there is no driver
  std::set<std::string> without_uuid_;  // buses of GPUs the driver gives no UUID for yet, said
  std::vector<PluginDevice> devices_;
};

}  // namespace gcr
