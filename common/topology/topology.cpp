#include "topology/topology.h"

#include <cstdlib>
#include <map>

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

int pcie_score(PcieRelation r) {
  switch (r) {
    case PcieRelation::kSameBoard:
      return 60;
    case PcieRelation::kSingleSwitch:
      return 50;
    case PcieRelation::kMultipleSwitches:
      return 40;
    case PcieRelation::kHostBridge:
      return 30;
    case PcieRelation::kSameNuma:
      return 20;
    case PcieRelation::kSystem:
      break;
  }
  return 10;
}

Topology empty_for(const std::vector<Gpu>& gpus, const Config::Driver& roots) {
  Topology t;
  const std::size_t n = gpus.size();
  for (const auto& gpu : gpus) {
    t.uuids.push_back(gpu.uuid);
    t.numa.push_back(numa_node_of(roots, gpu.bus));
  }
  t.nvlinks.assign(n, std::vector<int>(n, 0));
  t.pcie.assign(n, std::vector<PcieRelation>(n, PcieRelation::kSystem));
  t.switch_links.assign(n, 0);
  return t;
}

// The components of a GPU's device path below /sys/devices: "pci0000:00", "0000:00:01.0", ...
std::vector<std::string> device_path(const Config::Driver& roots, const PciAddress& bus) {
  const std::string link = join_root(roots.dev_root, "/sys/bus/pci/devices/" + bus.to_string());
  char* real = ::realpath(link.c_str(), nullptr);
  if (real == nullptr) return {};
  const std::string path = real;
  std::free(real);
  const std::string marker = "/sys/devices/";
  const auto at = path.find(marker);
  if (at == std::string::npos) return {};
  std::vector<std::string> parts;
  for (auto part : split(std::string_view(path).substr(at + marker.size()), '/'))
    parts.emplace_back(part);
  return parts;
}

PcieRelation relation_from_paths(const std::vector<std::string>& a,
                                 const std::vector<std::string>& b, bool same_numa) {
  std::size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  if (common == 0) return same_numa ? PcieRelation::kSameNuma : PcieRelation::kSystem;
  if (common == 1) return PcieRelation::kHostBridge;  // only the root bus is shared
  // Below a shared bridge: one switch when each GPU is one port further down, else more.
  const bool one_switch = a.size() - common <= 2 && b.size() - common <= 2;
  return one_switch ? PcieRelation::kSingleSwitch : PcieRelation::kMultipleSwitches;
}

}  // namespace

std::optional<std::int64_t> numa_node_of(const Config::Driver& roots, const PciAddress& bus) {
  const std::string path =
      join_root(roots.dev_root, "/sys/bus/pci/devices/" + bus.to_string() + "/numa_node");
  auto text = read_regular_file(path, 64);
  if (!text) return std::nullopt;
  if (const auto n = parse_decimal(trim(*text)); n && *n < 1024)
    return static_cast<std::int64_t>(*n);
  return std::nullopt;  // -1: the platform has no NUMA information for it
}

int Topology::pair_score(std::size_t i, std::size_t j) const {
  return nvlinks[i][j] * 100 + pcie_score(pcie[i][j]);
}

long Topology::set_score(const std::vector<std::size_t>& gpus) const {
  long total = 0;
  for (std::size_t x = 0; x < gpus.size(); ++x) {
    for (std::size_t y = x + 1; y < gpus.size(); ++y) total += pair_score(gpus[x], gpus[y]);
  }
  return total;
}

std::optional<std::size_t> Topology::index_of(const std::string& uuid) const {
  for (std::size_t i = 0; i < uuids.size(); ++i) {
    if (uuids[i] == uuid) return i;
  }
  return std::nullopt;
}

Result<Topology> topology_from_nvml(Nvml& nvml, const std::vector<Gpu>& gpus,
                                    const Config::Driver& roots) {
  Topology t = empty_for(gpus, roots);
  t.source = "NVML";
  std::map<PciAddress, std::size_t> by_bus;
  for (std::size_t i = 0; i < gpus.size(); ++i) by_bus[gpus[i].bus] = i;
  std::vector<int> to_switches(gpus.size(), 0);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    auto links = nvml.nvlinks(gpus[i].bus);
    if (!links) return links.error();
    for (const auto& link : *links) {
      if (link.to_switch) {
        ++to_switches[i];
      } else if (const auto peer = by_bus.find(link.remote); peer != by_bus.end()) {
        ++t.nvlinks[i][peer->second];
      }
    }
  }
  t.switch_links = to_switches;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = 0; j < gpus.size(); ++j) {
      if (i == j) continue;
      // Links are counted from both ends; keep them symmetric whatever NVML says.
      t.nvlinks[i][j] =
          std::min(t.nvlinks[i][j], t.nvlinks[j][i]) + std::min(to_switches[i], to_switches[j]);
      auto relation = nvml.common_ancestor(gpus[i].bus, gpus[j].bus);
      if (!relation) return relation.error();
      // sysfs knows the NUMA nodes for sure: two GPUs on one are not "across the system".
      const bool same_numa = t.numa[i] && t.numa[i] == t.numa[j];
      t.pcie[i][j] =
          *relation == PcieRelation::kSystem && same_numa ? PcieRelation::kSameNuma : *relation;
    }
  }
  return t;
}

Topology topology_from_sysfs(const std::vector<Gpu>& gpus, const Config::Driver& roots) {
  Topology t = empty_for(gpus, roots);
  t.source = "sysfs";
  std::vector<std::vector<std::string>> paths;
  for (const auto& gpu : gpus) paths.push_back(device_path(roots, gpu.bus));
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t j = 0; j < gpus.size(); ++j) {
      if (i == j) continue;
      const bool same_numa = t.numa[i] && t.numa[i] == t.numa[j];
      t.pcie[i][j] = relation_from_paths(paths[i], paths[j], same_numa);
    }
  }
  return t;
}

Topology read_topology(const std::vector<Gpu>& gpus, const Config::Driver& roots, Nvml* nvml) {
  if (nvml != nullptr) {
    if (auto t = topology_from_nvml(*nvml, gpus, roots)) return *t;
  }
  return topology_from_sysfs(gpus, roots);
}

std::string topology_table(const Topology& t) {
  const auto cell = [&](std::size_t i, std::size_t j) -> std::string {
    if (i == j) return "X";
    if (t.nvlinks[i][j] > 0) return "NV" + std::to_string(t.nvlinks[i][j]);
    switch (t.pcie[i][j]) {
      case PcieRelation::kSameBoard:
        return "BRD";
      case PcieRelation::kSingleSwitch:
        return "PIX";
      case PcieRelation::kMultipleSwitches:
        return "PXB";
      case PcieRelation::kHostBridge:
        return "PHB";
      case PcieRelation::kSameNuma:
        return "NODE";
      case PcieRelation::kSystem:
        break;
    }
    return "SYS";
  };
  std::string out = "      ";
  for (std::size_t j = 0; j < t.uuids.size(); ++j) {
    char head[16];
    std::snprintf(head, sizeof head, "%-6s", ("GPU" + std::to_string(j)).c_str());
    out += head;
  }
  out += "NUMA\n";
  for (std::size_t i = 0; i < t.uuids.size(); ++i) {
    char row[16];
    std::snprintf(row, sizeof row, "%-6s", ("GPU" + std::to_string(i)).c_str());
    out += row;
    for (std::size_t j = 0; j < t.uuids.size(); ++j) {
      char c[16];
      std::snprintf(c, sizeof c, "%-6s", cell(i, j).c_str());
      out += c;
    }
    out += t.numa[i] ? std::to_string(*t.numa[i]) : "-";
    out += "\n";
  }
  out +=
      "\nX = self, NV# = # NVLinks, BRD = same board, PIX = one PCIe switch, PXB = several "
      "switches,\nPHB = a host bridge, NODE = the same NUMA node, SYS = across NUMA nodes "
      "(from " +
      t.source + ")\n";
  return out;
}

}  // namespace gcr
