#include "request/gpu_select.h"

#include <algorithm>
#include <set>

#include "base/text.h"

namespace gcr {
namespace {

std::string describe_host(const std::vector<Gpu>& gpus) {
  if (gpus.empty()) return "this host has no GPU";
  if (gpus.size() == 1) return "this host has GPU 0";
  return "this host has GPUs 0-" + std::to_string(gpus.size() - 1);
}

Error unknown(const std::string& id, const std::string& why) {
  return Error{"unknown " + std::string(is_mig_id(id) ? "MIG device" : "GPU") + " `" +
               printable(id, 128) + "`: " + why};
}

Result<const Gpu*> match_gpu(const std::string& id, const std::vector<Gpu>& gpus) {
  if (const auto index = parse_decimal(id)) {
    if (*index >= gpus.size()) return unknown(id, describe_host(gpus));
    return &gpus[*index];
  }
  if (id.size() > 4 && iequals(id.substr(0, 4), "GPU-")) {
    const auto it =
        std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return iequals(g.uuid, id); });
    if (it == gpus.end()) return unknown(id, describe_host(gpus));
    return &*it;
  }
  if (const auto bus = parse_pci_address(id)) {
    const auto it =
        std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return g.bus == *bus; });
    if (it == gpus.end()) return unknown(id, describe_host(gpus));
    return &*it;
  }
  return Error{quote(id, 128) + " is not a GPU index, GPU UUID, PCI bus id or MIG device"};
}

Result<MigSelection> match_mig(const std::string& id, const std::vector<Gpu>& gpus,
                               const std::map<std::string, GpuFacts>& nvml) {
  if (iequals(id.substr(0, 4), "MIG-")) {
    for (const auto& gpu : gpus) {
      for (const auto& mig : mig_devices_of(gpu, nvml)) {
        if (iequals(mig.uuid, id)) return MigSelection{gpu, mig};
      }
    }
    return unknown(id, "no GPU has it");
  }
  const auto colon = id.find(':');
  const auto gpu_index = parse_decimal(std::string_view(id).substr(0, colon));
  const auto mig_index = parse_decimal(std::string_view(id).substr(colon + 1));
  if (!gpu_index || !mig_index) return Error{quote(id, 128) + " is not <gpu>:<mig>"};
  if (*gpu_index >= gpus.size()) return unknown(id, describe_host(gpus));
  const Gpu& gpu = gpus[*gpu_index];
  for (const auto& mig : mig_devices_of(gpu, nvml)) {
    if (mig.index == *mig_index) return MigSelection{gpu, mig};
  }
  return unknown(
      id, "GPU " + std::to_string(gpu.index) + " has no MIG device " + std::to_string(*mig_index));
}

}  // namespace

const std::vector<MigDevice>& mig_devices_of(const Gpu& gpu,
                                             const std::map<std::string, GpuFacts>& nvml) {
  static const std::vector<MigDevice> none;
  const auto it = nvml.find(gpu.uuid);
  return it == nvml.end() ? none : it->second.migs;
}

bool is_mig_id(const std::string& id) {
  if (id.size() > 4 && iequals(id.substr(0, 4), "MIG-")) return true;
  return id.find(':') != std::string::npos && id.find('.') == std::string::npos;
}

Result<Selection> select_gpus(const GpuRequest& request, const std::vector<Gpu>& gpus,
                              const std::map<std::string, GpuFacts>* nvml) {
  Selection out;
  std::set<unsigned> chosen;
  std::set<std::string> migs_seen;
  for (const auto& id : request.device_ids) {  // checked even next to `all`
    if (is_mig_id(id)) {
      if (nvml == nullptr)
        return Error{"MIG device `" + printable(id, 128) + "`: NVML did not answer"};
      auto mig = match_mig(id, gpus, *nvml);
      if (!mig) return mig.error();
      chosen.insert(mig->gpu.index);
      if (migs_seen.insert(mig->mig.uuid).second) out.migs.push_back(*mig);
      continue;
    }
    auto gpu = match_gpu(id, gpus);
    if (!gpu) return gpu.error();
    chosen.insert((*gpu)->index);
    out.whole.insert((*gpu)->index);
  }
  if (request.all) {
    out.gpus = gpus;
    for (const auto& gpu : gpus) out.whole.insert(gpu.index);
    return out;
  }
  for (unsigned index : chosen) out.gpus.push_back(gpus[index]);
  return out;
}

}  // namespace gcr
