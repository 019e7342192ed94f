#include "deviceplugin/inventory.h"

#include <algorithm>

#include "base/node_stat.h"
#include "deviceplugin/xid_watch.h"
#include "driver/host.h"
#include "mig/mig_strategy.h"

namespace gcr {
namespace {

bool same_devices(const std::vector<PluginDevice>& a, const std::vector<PluginDevice>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const PluginDevice& x, const PluginDevice& y) {
                      return x.id == y.id && x.resource == y.resource && x.healthy == y.healthy &&
                             x.numa == y.numa;
                    });
}

std::string mig_layout_of(DeviceNodes& nodes, const std::vector<Gpu>& gpus) {
  std::string layout;
  for (const auto& gpu : gpus) {
    layout += gpu.uuid + ":";
    for (const auto& i : nodes.mig_instances(gpu))
      layout += std::to_string(i.gpu_instance) + "/" + std::to_string(i.compute_instance) + ",";
    layout += ";";
  }
  return layout;
}

}  // namespace

std::set<std::string> Inventory::resources() const {
  std::set<std::string> out{config_.device_plugin.resource_name};
  for (const auto& d : devices_) out.insert(d.resource);
  return out;
}

std::set<std::string> Inventory::unhealthy_gpus() const {
  std::set<std::string> out;
  for (const auto& [uuid, why] : node_failing_) out.insert(uuid);
  for (const auto& [uuid, xids] : xid_failing_) {
    if (std::any_of(xids.failures.begin(), xids.failures.end(),
                    [](const XidFailure& f) { return !f.mig; }))
      out.insert(uuid);
  }
  return out;
}

void Inventory::discover(DeviceNodes& nodes, Nvml* nvml, InventoryChange& change) {
  auto found = nodes.gpus();
  if (auto version = nodes.version(); !version || !found) {
    const std::string why = !version ? version.error().message : found.error().message;
    if (driver_missing_ != why) {
      change.lines.push_back(why + ": advertising " +
                             (known_.empty() ? "no devices" : "every GPU as Unhealthy") +
                             ", watching for the driver");
    }
    driver_missing_ = why;
    return;
  }
  if (driver_missing_) change.lines.push_back("NVIDIA driver found");
  driver_missing_.reset();
  for (const auto& gpu : *found) {
    if (!gpu.uuid_known()) {
      // Known by UUID everywhere: advertised once the driver gives it one (NVML, loaded by
      // the plugin, initialises the GPU), never under the placeholder several GPUs share. One
      // known already keeps its UUID.
      const bool known =
          std::any_of(known_.begin(), known_.end(), [&](const Gpu& k) { return k.bus == gpu.bus; });
      if (!known && without_uuid_.insert(gpu.bus.to_string()).second)
        change.lines.push_back("GPU at " + gpu.bus.to_string() +
                               ": the driver gives no UUID for it yet (not initialised): "
                               "advertised once it does");
      continue;
    }
    without_uuid_.erase(gpu.bus.to_string());
    const bool known =
        std::any_of(known_.begin(), known_.end(), [&](const Gpu& k) { return k.uuid == gpu.uuid; });
    if (known) continue;
    // Its index as the driver numbers it now, unless a known GPU holds that one already.
    Gpu added = gpu;
    const auto taken = [&](unsigned i) {
      return std::any_of(known_.begin(), known_.end(), [&](const Gpu& k) { return k.index == i; });
    };
    while (taken(added.index)) ++added.index;
    known_.push_back(added);
    change.gpus_changed = true;
    change.lines.push_back("found GPU " + std::to_string(added.index) + " " + gpu.uuid + " (" +
                           gpu.bus.to_string() + ")");
  }
  std::sort(known_.begin(), known_.end(),
            [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
  if (change.gpus_changed) {
    topology_ = read_topology(known_, config_.driver, nvml);
    change.topology_changed = true;
    change.lines.push_back("topology of " + std::to_string(known_.size()) + " GPUs read from " +
                           topology_.source);
  }
}

void Inventory::read_mig_layout(DeviceNodes& nodes, Nvml* nvml, InventoryChange& change) {
  if (config_.device_plugin.mig_strategy == "none" || driver_missing_) return;
  const std::string layout =
      mig_layout_of(nodes, known_) + (nvml != nullptr ? mig_mode_marks(*nvml, known_) : "");
  if (layout == mig_layout_ && !change.gpus_changed) return;
  if (!mig_layout_.empty() && layout != mig_layout_)
    change.lines.push_back("the MIG layout changed");
  mig_layout_ = layout;
  migs_unknown_ = nvml == nullptr;
  if (nvml == nullptr) {
    migs_.clear();
    if (mig_error_.empty()) change.lines.push_back("MIG devices unknown: NVML is unavailable");
    mig_error_ = "no NVML";
    return;
  }
  mig_error_.clear();
  auto modes = read_mig_modes(*nvml, known_);
  // A GPU NVML does not answer for now (lost, being reset) keeps the MIG layout last read for
  // it; one never read counts as not in MIG mode. Its health says the rest.
  for (const auto& gpu : known_) {
    if (modes.unknown.count(gpu.uuid) == 0) continue;
    change.lines.push_back("GPU " + std::to_string(gpu.index) + " (" + gpu.uuid +
                           "): NVML does not say its MIG mode now; its MIG layout as last read");
    if (const auto last = migs_.find(gpu.uuid); last != migs_.end())
      modes.in_mig_mode[gpu.uuid] = last->second;
  }
  migs_ = std::move(modes.in_mig_mode);
  if (config_.device_plugin.mig_strategy != "mixed") return;
  for (const auto& gpu : known_) {
    const auto it = migs_.find(gpu.uuid);
    if (it == migs_.end()) continue;
    const std::string named = "GPU " + std::to_string(gpu.index) + " (" + gpu.uuid + ")";
    if (it->second.empty())
      change.lines.push_back(named +
                             " is in MIG mode with no MIG devices: none of it is advertised");
    for (const auto& mig : it->second) {
      if (mig.whole_gpu_instance()) continue;
      change.lines.push_back(named + ": MIG device " + mig.uuid + " (" + mig.profile() +
                             ") is not advertised: its compute instance is smaller than its GPU "
                             "instance, which mig-strategy mixed does not offer");
    }
  }
}

InventoryChange Inventory::refresh(Nvml* nvml) {
  InventoryChange change;
  DriverHost host(config_.driver, lstat_node);  // a new one: nothing cached between ticks
  discover(host.devices(), nvml, change);
  read_mig_layout(host.devices(), nvml, change);
  std::map<std::string, std::string> failing;
  if (driver_missing_) {
    for (const auto& gpu : known_) failing.emplace(gpu.uuid, *driver_missing_);
  } else if (config_.device_plugin.health) {
    failing = health_.failing(known_);
  }
  for (const auto& [uuid, why] : failing) {
    if (node_failing_.count(uuid) == 0)
      change.lines.push_back("GPU " + uuid + " is Unhealthy: " + why);
  }
  for (const auto& [uuid, why] : node_failing_) {
    if (failing.count(uuid) == 0) change.lines.push_back("GPU " + uuid + " is Healthy again");
  }
  node_failing_ = std::move(failing);
  relist(change);
  return change;
}

InventoryChange Inventory::use_nvml(Nvml& nvml) {
  InventoryChange change;
  topology_ = read_topology(known_, config_.driver, &nvml);
  change.topology_changed = true;
  change.lines.push_back("topology of " + std::to_string(known_.size()) + " GPUs read from " +
                         topology_.source);
  mig_layout_.clear();
  DriverHost host(config_.driver, lstat_node);
  read_mig_layout(host.devices(), &nvml, change);
  relist(change);
  return change;
}

InventoryChange Inventory::apply_xid(const XidEvent& event) {
  InventoryChange change;
  if (is_ignored_xid(event.xid, config_.device_plugin.ignored_xids)) {
    change.lines.push_back("Xid " + std::to_string(event.xid) + " on " +
                           (event.gpu ? event.gpu->to_string() : std::string("a GPU")) +
                           " ignored: an application's error, not the GPU's");
    return change;
  }
  for (const auto& gpu : known_) {
    if (event.gpu && gpu.bus != *event.gpu) continue;
    std::optional<MigInstance> mig;
    if (event.gpu_instance && event.compute_instance)
      mig = MigInstance{*event.gpu_instance, *event.compute_instance};
    const std::string why =
        "critical Xid " + std::to_string(event.xid) + " (until the GPU is reset)";
    const std::string what = mig ? " MIG instance " + std::to_string(mig->gpu_instance) + "/" +
                                       std::to_string(mig->compute_instance)
                                 : std::string();
    change.lines.push_back("GPU " + gpu.uuid + what + " is Unhealthy: " + why);
    auto& failures = xid_failing_[gpu.uuid].failures;
    const auto same = std::find_if(failures.begin(), failures.end(),
                                   [&](const XidFailure& f) { return f.mig == mig; });
    if (same == failures.end())
      failures.push_back(XidFailure{mig, why});
    else
      same->why = why;
  }
  relist(change);
  return change;
}

InventoryChange Inventory::apply_xid_wait_failure(const std::optional<std::string>& why) {
  InventoryChange change;
  if (why == xid_wait_failing_) return change;
  if (why && !xid_wait_failing_)
    change.lines.push_back("waiting for Xid events failed: " + *why +
                           "; every GPU is Unhealthy until the wait answers again");
  if (!why) change.lines.push_back("waiting for Xid events works again");
  xid_wait_failing_ = why;
  relist(change);
  return change;
}

InventoryChange Inventory::check_resets(Nvml& nvml) {
  InventoryChange change;
  for (auto it = xid_failing_.begin(); it != xid_failing_.end();) {
    const auto gpu = std::find_if(known_.begin(), known_.end(),
                                  [&](const Gpu& g) { return g.uuid == it->first; });
    const bool answers = gpu != known_.end() && nvml.answers(gpu->bus);
    if (!answers) {
      it->second.seen_lost = true;
      ++it;
      continue;
    }
    if (!it->second.seen_lost) {
      ++it;
      continue;
    }
    change.lines.push_back("GPU " + it->first + " was reset: Healthy again");
    it = xid_failing_.erase(it);
  }
  if (!change.lines.empty()) relist(change);
  return change;
}

void Inventory::relist(InventoryChange& change) {
  // With single, a GPU whose MIG mode is not known might be advertised whole by mistake.
  auto devices = migs_unknown_ && config_.device_plugin.mig_strategy == "single"
                     ? Result<std::vector<PluginDevice>>(
                           Error{"mig-strategy single: the GPUs' MIG modes are unknown"})
                     : devices_of(known_, migs_, config_);
  if (!devices) {
    if (mig_error_ != devices.error().message)
      change.lines.push_back(devices.error().message + ": advertising no devices");
    mig_error_ = devices.error().message;
    devices = std::vector<PluginDevice>();
  }
  for (auto& d : *devices) {
    // NUMA as the topology read it (when the GPUs changed), not sysfs again on every tick.
    if (const auto gpu = topology_.index_of(d.uuid)) d.numa = topology_.numa[*gpu];
    if (const auto node = node_failing_.find(d.uuid); node != node_failing_.end()) {
      d.healthy = false;
      d.unhealthy_because = node->second;
    } else if (const auto xid = xid_failing_.find(d.uuid); xid != xid_failing_.end()) {
      // A whole-GPU Xid takes every device on it (replicas, MIG devices); an instance's, only
      // that MIG device.
      for (const auto& failure : xid->second.failures) {
        if (failure.mig && !(d.mig && *d.mig == *failure.mig)) continue;
        d.healthy = false;
        d.unhealthy_because = failure.why;
        break;
      }
    }
    if (d.healthy && xid_wait_failing_) {
      d.healthy = false;
      d.unhealthy_because = "waiting for Xid events failed: " + *xid_wait_failing_;
    }
  }
  change.devices_changed = !same_devices(*devices, devices_);
  devices_ = std::move(*devices);
}

}  // namespace gcr
