#include "gpu_select.h"

#include <algorithm>
#include <set>

#include "text.h"

namespace gcr {
namespace {

std::string describe_host(const std::vector<Gpu>& gpus) {
  if (gpus.empty()) return "this host has no GPU";
  if (gpus.size() == 1) return "this host has GPU 0";
  return "this host has GPUs 0-" + std::to_string(gpus.size() - 1);
}

Result<const Gpu*> match(const std::string& id, const std::vector<Gpu>& gpus) {
  const auto unknown = [&] {
    return Error{"unknown GPU `" + printable(id, 128) + "`: " + describe_host(gpus)};
  };
  if (const auto index = parse_decimal(id)) {
    if (*index >= gpus.size()) return unknown();
    return &gpus[*index];
  }
  if (id.size() > 4 && iequals(id.substr(0, 4), "GPU-")) {
    const auto it =
        std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return iequals(g.uuid, id); });
    if (it == gpus.end()) return unknown();
    return &*it;
  }
  if (id.size() > 4 && iequals(id.substr(0, 4), "MIG-")) {
    return Error{"MIG device `" + printable(id, 128) +
                 "`: MIG devices cannot be selected by this runtime"};
  }
  if (const auto bus = parse_pci_address(id)) {
    const auto it =
        std::find_if(gpus.begin(), gpus.end(), [&](const Gpu& g) { return g.bus == *bus; });
    if (it == gpus.end()) return unknown();
    return &*it;
  }
  if (id.find(':') != std::string::npos) {
    return Error{"MIG device `" + printable(id, 128) +
                 "`: MIG devices cannot be selected by this runtime"};
  }
  return Error{"`" + printable(id, 128) + "` is not a GPU index, GPU UUID or PCI bus id"};
}

}  // namespace

Result<std::vector<Gpu>> select_gpus(const GpuRequest& request, const std::vector<Gpu>& gpus) {
  std::set<unsigned> chosen;
  for (const auto& id : request.device_ids) {  // checked even next to `all`
    auto gpu = match(id, gpus);
    if (!gpu) return gpu.error();
    chosen.insert((*gpu)->index);
  }
  if (request.all) return gpus;
  std::vector<Gpu> out;
  for (unsigned index : chosen) out.push_back(gpus[index]);
  return out;
}

}  // namespace gcr
