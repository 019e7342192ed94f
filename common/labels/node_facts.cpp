#include "labels/node_facts.h"

#include "base/fs.h"
#include "base/node_stat.h"
#include "base/text.h"
#include "driver/host.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxDmiBytes = 4096;
constexpr std::size_t kPciConfigBytes = 4096;  // PCI Express' extended configuration space

// sysfs' "0x030200": six hexadecimal digits after 0x.
std::optional<std::uint32_t> parse_pci_class(std::string_view text) {
  if (text.size() != 8 || !text.starts_with("0x")) return std::nullopt;
  return parse_hex(text.substr(2), 6);
}

}  // namespace

NodeLabelFacts NodeFactsReader::read(const LabelSources& sources) {
  read_driver_version();
  ask_cuda_version(sources.nvml);
  read_machine();
  NodeLabelFacts facts;
  facts.driver_version = driver_version_;
  facts.cuda_version = cuda_version_;
  facts.machine = *machine_;
  facts.mig_modes_known = sources.mig_modes_known;
  for (const auto& gpu : sources.gpus) facts.gpus.push_back(gpu_facts(gpu, sources));
  if (sources.nvml != nullptr && sources.topology.source == "NVML")
    facts.topology = sources.topology;
  return facts;
}

GpuLabelFacts NodeFactsReader::gpu_facts(const Gpu& gpu, const LabelSources& sources) {
  auto known = nvml_facts_.find(gpu.uuid);
  if (known == nvml_facts_.end() && sources.nvml != nullptr) {
    NvmlFacts asked{sources.nvml->arch(gpu.bus), sources.nvml->memory_mib(gpu.bus),
                    sources.nvml->mig_capable(gpu.bus)};
    // A GPU NVML does not answer for now (lost, being reset) is asked again next time.
    if (asked.arch) known = nvml_facts_.emplace(gpu.uuid, asked).first;
  }
  GpuLabelFacts g;
  g.index = gpu.index;
  g.uuid = gpu.uuid;
  g.model = gpu.model;
  if (known != nvml_facts_.end()) {
    g.arch = known->second.arch;
    g.memory_mib = known->second.memory_mib;
    g.mig_capable = known->second.mig_capable;
  }
  g.pci_class = pci_class(gpu);
  if (const auto migs = sources.migs.find(gpu.uuid); migs != sources.migs.end()) {
    g.migs = migs->second;
    g.mig_mode = true;
  }
  g.healthy = sources.unhealthy.count(gpu.uuid) == 0;
  // Asked on every read, as GFD asks: a registration completes, a partition changes.
  const auto fabric = sources.nvml != nullptr ? sources.nvml->fabric(gpu.bus) : std::nullopt;
  g.fabric_known = fabric.has_value();
  if (fabric && fabric->state == GpuFabric::State::kAttached)
    g.fabric_clique = fabric->cluster_uuid + "." + std::to_string(fabric->clique);
  g.vgpu = vgpu(gpu);
  return g;
}

std::optional<VgpuInfo> NodeFactsReader::vgpu(const Gpu& gpu) {
  if (const auto known = vgpus_.find(gpu.uuid); known != vgpus_.end()) return known->second;
  const auto config = read_regular_file(
      join_root(roots_.dev_root, "/sys/bus/pci/devices/" + gpu.bus.to_string() + "/config"),
      kPciConfigBytes);
  // Read without privilege, the space ends after its first 64 bytes: asked again next time.
  if (!config || config->size() < 256) return std::nullopt;
  return vgpus_.emplace(gpu.uuid, vgpu_of_pci_config(*config)).first->second;
}

std::optional<std::uint32_t> NodeFactsReader::pci_class(const Gpu& gpu) {
  if (const auto known = pci_classes_.find(gpu.uuid); known != pci_classes_.end())
    return known->second;
  const auto text = read_regular_file(
      join_root(roots_.dev_root, "/sys/bus/pci/devices/" + gpu.bus.to_string() + "/class"), 64);
  if (!text) return std::nullopt;
  const auto value = parse_pci_class(trim(*text));
  if (value) pci_classes_[gpu.uuid] = *value;
  return value;
}

void NodeFactsReader::read_driver_version() {
  DriverHost host(roots_, lstat_node);
  if (auto version = host.devices().version()) driver_version_ = *version;
}

void NodeFactsReader::ask_cuda_version(Nvml* nvml) {
  if (nvml == nullptr || !driver_version_ || cuda_asked_for_ == driver_version_) return;
  if (auto cuda = nvml->cuda_version()) {
    cuda_version_ = *cuda;
    cuda_asked_for_ = driver_version_;
  }
}

void NodeFactsReader::read_machine() {
  if (machine_) return;
  const auto text =
      read_regular_file(join_root(roots_.dev_root, "/sys/class/dmi/id/product_name"), kMaxDmiBytes);
  // Read, it is the label's value even when empty, as GFD's is; unreadable, GFD's "unknown".
  machine_ = text ? std::optional<std::string>(trim(*text)) : std::optional<std::string>();
}

}  // namespace gcr
