// How the node's GPUs are connected, for choosing sets that talk fast: for every pair the
// number of NVLinks between them and how close they are on PCIe, plus each GPU's NUMA node.
// Read once (NVML when it answers, sysfs otherwise) and kept: choosing never asks the driver.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "driver/device_nodes.h"
#include "driver/nvml.h"

namespace gcr {

struct Topology {
  std::vector<std::string> uuids;                 // the GPUs, in index order
  std::vector<std::optional<std::int64_t>> numa;  // per GPU
  std::vector<std::vector<int>> nvlinks;          // [i][j]: links between GPUs i and j
  std::vector<std::vector<PcieRelation>> pcie;    // [i][j]
  std::vector<int> switch_links;                  // per GPU: its NVLinks to NVSwitches
  std::string source;                             // "NVML" or "sysfs"

  // What a pair is worth together: 100 per NVLink, then PCIe closeness (same board 60, one
  // switch 50, several switches 40, host bridge 30, same NUMA node 20, across the system 10).
  [[nodiscard]] int pair_score(std::size_t i, std::size_t j) const;
  // The sum over every pair of `gpus` (indices into uuids).
  [[nodiscard]] long set_score(const std::vector<std::size_t>& gpus) const;
  [[nodiscard]] std::optional<std::size_t> index_of(const std::string& uuid) const;
};

// <dev-root>/sys/bus/pci/devices/<bus>/numa_node: the node, or none for -1 or no file.
[[nodiscard]] std::optional<std::int64_t> numa_node_of(const Config::Driver& roots,
                                                       const PciAddress& bus);

// From NVML: NVLinks counted per peer (two GPUs on NVSwitches share the smaller of their
// switch link counts) and NVML's common-ancestor level; NUMA from sysfs either way.
[[nodiscard]] Result<Topology> topology_from_nvml(Nvml& nvml, const std::vector<Gpu>& gpus,
                                                  const Config::Driver& roots);

// From sysfs alone: no NVLinks; the PCIe relation from where the two GPUs' device paths
// (/sys/devices/pci.../...) part, and NUMA nodes.
[[nodiscard]] Topology topology_from_sysfs(const std::vector<Gpu>& gpus,
                                           const Config::Driver& roots);

// NVML when it answers, else sysfs.
[[nodiscard]] Topology read_topology(const std::vector<Gpu>& gpus, const Config::Driver& roots,
                                     Nvml* nvml);

// The matrix as `nvidia-smi topo -m` shows it: X, NV#, BRD, PIX, PXB, PHB, NODE, SYS, and a
// NUMA column.
[[nodiscard]] std::string topology_table(const Topology& topology);

}  // namespace gcr
