#include "request/gpu_select.h"

#include <algorithm>
#include <set>

#include "base/text.h"

namespace gcr {
namespace {

std::string describe_host(std::size_t count) {
  if (count == 0) return "this host has no GPU";
  if (count == 1) return "this host has GPU 0";
  return "this host has GPUs 0-" + std::to_string(count - 1);
}

std::string describe_host(const std::vector<Gpu>& gpus) {
  return describe_host(gpus.size());
}

// Why a UUID may match none of `gpus`: some have none yet (Gpu::uuid_known).
std::string uuids_not_given(const std::vector<Gpu>& gpus) {
  std::vector<std::string> indices;
  for (const auto& gpu : gpus) {
    if (!gpu.uuid_known()) indices.push_back(std::to_string(gpu.index));
  }
  if (indices.empty()) return "";
  return "; the driver gives no UUID for GPU " + join(indices, ", ") +
         " until it initialises it (nvidia-persistenced does at boot), so name it by index or PCI "
         "bus id";
}

Error unknown(const std::string& id, const std::string& why) {
  return Error{"unknown " + std::string(is_mig_id(id) ? "MIG device" : "GPU") + " `" +
               printable(id, 128) + "`: " + why};
}

// A PCI bus id as a request spells it: <domain>:<bus>:<device> may leave out `.0`, as
// NVIDIA's reading of it does.
std::optional<PciAddress> requested_pci_address(const std::string& id) {
  const bool no_function =
      id.find('.') == std::string::npos && std::count(id.begin(), id.end(), ':') == 2;
  return parse_pci_address(no_function ? id + ".0" : id);
}

// The index of the GPU `id` names.
Result<unsigned> match_gpu(const std::string& id, GpuSource& gpus) {
  if (const auto index = parse_decimal(id)) {
    auto buses = gpus.buses();
    if (!buses) return buses.error();
    if (*index >= buses->size()) return unknown(id, describe_host(buses->size()));
    return static_cast<unsigned>(*index);
  }
  if (id.size() > 4 && iequals(id.substr(0, 4), "GPU-")) {
    auto all = gpus.all();
    if (!all) return all.error();
    const auto it = std::find_if(all->begin(), all->end(), [&](const Gpu& g) {
      return g.uuid_known() && iequals(g.uuid, id);
    });
    if (it == all->end()) return unknown(id, describe_host(*all) + uuids_not_given(*all));
    return it->index;
  }
  if (const auto bus = requested_pci_address(id)) {
    auto buses = gpus.buses();
    if (!buses) return buses.error();
    const auto it = std::find(buses->begin(), buses->end(), *bus);
    if (it != buses->end()) return static_cast<unsigned>(it - buses->begin());
    // Not a name the source gave: every GPU's own bus is asked before the ID is unknown.
    auto all = gpus.all();
    if (!all) return all.error();
    const auto gpu =
        std::find_if(all->begin(), all->end(), [&](const Gpu& g) { return g.bus == *bus; });
    if (gpu == all->end()) return unknown(id, describe_host(*all));
    return gpu->index;
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
  return std::count(id.begin(), id.end(), ':') == 1 && id.find('.') == std::string::npos;
}

Result<Selection> select_gpus(const GpuRequest& request, GpuSource& gpus,
                              const std::map<std::string, GpuFacts>* nvml) {
  Selection out;
  std::set<unsigned> chosen;
  std::set<std::string> migs_seen;
  for (const auto& id : request.device_ids) {  // checked even next to `all`
    if (is_mig_id(id)) {
      if (nvml == nullptr)
        return Error{"MIG device `" + printable(id, 128) + "`: NVML did not answer"};
      auto all = gpus.all();
      if (!all) return all.error();
      auto mig = match_mig(id, *all, *nvml);
      if (!mig) return mig.error();
      chosen.insert(mig->gpu.index);
      if (migs_seen.insert(mig->mig.uuid).second) out.migs.push_back(*mig);
      continue;
    }
    auto index = match_gpu(id, gpus);
    if (!index) return index.error();
    chosen.insert(*index);
    out.whole.insert(*index);
  }
  if (request.all) {
    auto all = gpus.all();
    if (!all) return all.error();
    out.gpus = std::move(*all);
    for (const auto& gpu : out.gpus) out.whole.insert(gpu.index);
    return out;
  }
  for (unsigned index : chosen) {
    auto gpu = gpus.at(index);
    if (!gpu) return gpu.error();
    out.gpus.push_back(std::move(*gpu));
  }
  return out;
}

namespace {

class GpuList final : public GpuSource {
 public:
  explicit GpuList(const std::vector<Gpu>& gpus) : gpus_(gpus) {}
  Result<std::vector<PciAddress>> buses() override {
    std::vector<PciAddress> out;
    for (const auto& gpu : gpus_) out.push_back(gpu.bus);
    return out;
  }
  Result<Gpu> at(unsigned index) override { return gpus_.at(index); }
  Result<std::vector<Gpu>> all() override { return gpus_; }

 private:
  const std::vector<Gpu>& gpus_;
};

class DriverGpus final : public GpuSource {
 public:
  explicit DriverGpus(DeviceNodes& nodes) : nodes_(nodes) {}
  Result<std::vector<PciAddress>> buses() override { return nodes_.gpu_buses(); }
  Result<Gpu> at(unsigned index) override { return nodes_.gpu(index); }
  Result<std::vector<Gpu>> all() override { return nodes_.gpus(); }

 private:
  DeviceNodes& nodes_;
};

}  // namespace

Result<Selection> select_gpus(const GpuRequest& request, const std::vector<Gpu>& gpus,
                              const std::map<std::string, GpuFacts>* nvml) {
  GpuList list(gpus);
  return select_gpus(request, list, nvml);
}

Result<Selection> select_gpus(const GpuRequest& request, DeviceNodes& nodes,
                              const std::map<std::string, GpuFacts>* nvml) {
  DriverGpus driver(nodes);
  auto selected = select_gpus(request, driver, nvml);
  if (nodes.gpu_order_from_names()) return selected;
  // An entry not named by the bus its file gives (or none listed): the whole table decides
  // every ID, as if it had been read first.
  auto all = nodes.gpus();
  if (!all) return all.error();
  return select_gpus(request, *all, nvml);
}

}  // namespace gcr
