#include "deviceplugin/allocate.h"

#include <algorithm>
#include <set>

#include "base/text.h"
#include "deviceplugin/imex.h"
#include "deviceplugin/mps_supervisor.h"
#include "mps/mps_daemon.h"
#include "vocabulary/imex_channel.h"
#include "vocabulary/request_names.h"

namespace gcr {
namespace {

bool uses(const Config& config, const char* strategy) {
  const auto& list = config.device_plugin.device_list;
  return std::find(list.begin(), list.end(), strategy) != list.end();
}

// The devices for `ids`, each GPU (or MIG device) once, in request order. Two replicas of one
// are refused when replicas-on-distinct-gpus asks for different ones, not silently shared.
Result<std::vector<const PluginDevice*>> chosen_gpus(const std::vector<std::string>& ids,
                                                     const std::vector<PluginDevice>& devices,
                                                     const Config& config) {
  // Two IDs of one GPU exist only where it has replicas.
  const bool distinct = config.device_plugin.replicas_on_distinct_gpus && !config.mps();
  const auto table = by_id(devices);
  std::vector<std::pair<std::string, const PluginDevice*>> out;
  for (const auto& id : ids) {
    const auto it = table.find(id);
    if (it == table.end()) return Error{"unknown device " + quote(id, 128)};
    if (!it->second->healthy)
      return Error{"device " + quote(id, 128) + " is unhealthy: " + it->second->unhealthy_because};
    const auto same = std::find_if(out.begin(), out.end(), [&](const auto& o) {
      return o.second->gpu_id == it->second->gpu_id;
    });
    if (same == out.end()) {
      out.emplace_back(id, it->second);
    } else if (distinct && same->first != id) {
      return Error{"devices " + quote(same->first, 128) + " and " + quote(id, 128) +
                   " are replicas of one GPU (" + it->second->gpu_id +
                   "); [device-plugin] replicas-on-distinct-gpus gives a request different GPUs"};
    }
  }
  std::vector<const PluginDevice*> gpus;
  for (const auto& o : out) gpus.push_back(o.second);
  return gpus;
}

// "GPU-0: 2, GPU-1: 1": how many of `ids` are shares of each GPU, in request order.
std::string shares_per_gpu(const std::vector<std::string>& ids,
                           const std::vector<PluginDevice>& devices) {
  const auto table = by_id(devices);
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& id : ids) {
    const std::string& gpu = table.at(id)->gpu_id;
    auto it =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == gpu; });
    if (it == counts.end()) {
      counts.emplace_back(gpu, 1);
    } else {
      ++it->second;
    }
  }
  std::vector<std::string> parts;
  for (const auto& [gpu, n] : counts) parts.push_back(gpu + ": " + std::to_string(n));
  return join(parts, ", ");
}

// "GPU-0: 2, GPU-1: 1": each GPU's shares among the devices the kubelet said were free when it
// asked for a preferred set including these `ids`; "" where not known.
std::string free_shares_text(const std::vector<std::string>& ids,
                             const std::vector<std::string>& free_when_asked,
                             const std::vector<PluginDevice>& devices) {
  const std::set<std::string> free(free_when_asked.begin(), free_when_asked.end());
  const bool asked_for_these =
      std::all_of(ids.begin(), ids.end(), [&](const auto& id) { return free.count(id) != 0; });
  if (free.empty() || !asked_for_these) return "";
  std::vector<std::string> known;  // in device order
  for (const auto& d : devices) {
    if (free.count(d.id) != 0) known.push_back(d.id);
  }
  return shares_per_gpu(known, devices);
}

// Why a container's `shares` handed from several GPUs are refused: more than a GPU has, or no
// GPU had that many free.
std::string spread_refusal(std::int64_t shares, const std::vector<std::string>& ids,
                           const std::vector<std::string>& free_when_asked,
                           const std::vector<PluginDevice>& devices) {
  std::int64_t most = 0;
  for (const auto& d : devices) most = std::max(most, d.replicas);
  const std::string head =
      "MPS gives a container shares of one GPU (its limits are one GPU's): the kubelet handed " +
      std::to_string(shares) + " shares of several GPUs (" + shares_per_gpu(ids, devices) + ")";
  if (shares > most)
    return head + ", and a GPU has at most " + std::to_string(most) + "; ask for at most " +
           std::to_string(most) + " " + devices.front().resource;
  const std::string free = free_shares_text(ids, free_when_asked, devices);
  return head +
         (free.empty() ? ", as no GPU had " + std::to_string(shares) + " free"
                       : " (free when the kubelet last asked: " + free + ")") +
         "; wait for a GPU's shares to be free, or ask for fewer";
}

// sharing = mps: a container of k shares of one GPU gets the pipe and shared memory of the
// daemon for containers of k shares of it, and the limits that daemon holds its clients to:
// k/replicas of the threads and of the memory (the server's defaults, which a client can lower
// but not raise). Shares of two GPUs are refused: a client is held to one GPU's limits. The pipe
// directory is read-only (a pod cannot replace the daemon's files with links for it to follow,
// nor grow its lock file), and its `log` FIFO, which the daemon alone reads and writes, is
// /dev/null there (a pod that fills it would hang the daemon).
Status add_mps(ContainerAllocation& out, const std::vector<std::string>& ids,
               const std::vector<const PluginDevice*>& gpus,
               const std::vector<PluginDevice>& devices,
               const std::vector<std::string>& free_when_asked, const Config& config) {
  if (gpus.empty()) return {};  // a container that asked for none gets none
  const PluginDevice& gpu = *gpus[0];
  const auto shares =
      static_cast<std::int64_t>(std::set<std::string>(ids.begin(), ids.end()).size());
  if (gpus.size() > 1) return Error{spread_refusal(shares, ids, free_when_asked, devices)};
  const MpsDirs dirs = mps_dirs(config, gpu.resource, gpu.replicas, shares);
  out.mounts.push_back({dirs.pipe, kMpsContainerPipeDir, true});
  out.mounts.push_back({"/dev/null", std::string(kMpsContainerPipeDir) + "/log", false});
  out.mounts.push_back({dirs.shm, "/dev/shm", false});
  out.envs["CUDA_MPS_PIPE_DIRECTORY"] = kMpsContainerPipeDir;
  out.envs["CUDA_MPS_ACTIVE_THREAD_PERCENTAGE"] =
      std::to_string(share_percentage(gpu.replicas, shares));
  if (const auto mib = gpu.mps_share_mib.find(shares); mib != gpu.mps_share_mib.end())
    out.envs["CUDA_MPS_PINNED_DEVICE_MEM_LIMIT"] = "0=" + std::to_string(mib->second) + "M";
  return {};
}

// The IMEX `channels` in the forms the device-list strategies name, as NVIDIA's plugin hands
// them: NVIDIA_IMEX_CHANNELS, imex/<channel> markers, and CDI devices
// <vendor>/imex-channel=<channel> added to `cdi_names` (vendor: [cdi] default-kind's;
// `gpu-ctk cdi generate --mode imex` writes their spec).
void add_imex_channels(ContainerAllocation& out, std::vector<std::string>& cdi_names,
                       const std::vector<unsigned>& channels, const Config& config) {
  if (channels.empty()) return;
  const std::string& kind = config.cdi.default_kind;
  const std::string vendor = kind.substr(0, kind.find('/'));
  if (uses(config, "envvar")) out.envs[kImexChannelsVar] = imex_channel_list(channels);
  for (unsigned channel : channels) {
    const std::string n = std::to_string(channel);
    if (uses(config, "volume-mounts"))
      out.mounts.push_back(
          {"/dev/null", std::string(kVolumeMarkerDir) + "/" + kImexMarkerFolder + "/" + n, false});
    cdi_names.push_back(imex_channel_cdi_name(vendor, channel));
  }
}

// The resource the kubelet asked for `gpus` of (one per Allocate: one socket per resource).
const std::string& resource_of(const std::vector<const PluginDevice*>& gpus, const Config& config) {
  if (gpus.empty() || gpus.front()->resource.empty()) return config.device_plugin.resource_name;
  return gpus.front()->resource;
}

}  // namespace

Result<ContainerAllocation> allocate_container(const std::vector<std::string>& ids,
                                               const std::vector<PluginDevice>& devices,
                                               const Config& config,
                                               const AllocationExtras& extras) {
  auto gpus = chosen_gpus(ids, devices, config);
  if (!gpus) return gpus.error();
  std::vector<std::string> gpu_ids;
  std::vector<std::string> cdi_names;
  for (const auto* d : *gpus) {
    gpu_ids.push_back(d->gpu_id);
    cdi_names.push_back(d->cdi_name);
  }
  ContainerAllocation out;
  if (uses(config, "envvar")) out.envs[kVisibleDevicesVar] = join(gpu_ids, ",");
  if (uses(config, "volume-mounts")) {
    // As NVIDIA's plugin: the variable says "see the mounts", so an image's own value
    // (NVIDIA_VISIBLE_DEVICES=all) does not select GPUs.
    out.envs[kVisibleDevicesVar] = kVolumeMarkerDir;
    for (const auto& id : gpu_ids)
      out.mounts.push_back({"/dev/null", std::string(kVolumeMarkerDir) + "/" + id, false});
  }
  if (!gpus->empty()) add_imex_channels(out, cdi_names, extras.imex_channels, config);
  // A key per resource: the kubelet merges the answers for a container's resources (a GPU and
  // a MIG profile under mig-strategy mixed), keeping the first of two equal keys.
  if (uses(config, "cdi-annotations"))
    out.annotations[plugin_cdi_annotation_key(resource_of(*gpus, config))] = join(cdi_names, ",");
  if (uses(config, "cdi-cri")) out.cdi_devices = cdi_names;
  if (config.mps()) {
    if (auto s = add_mps(out, ids, *gpus, devices, extras.free_when_asked, config); !s)
      return s.error();
  }
  return out;
}

}  // namespace gcr
