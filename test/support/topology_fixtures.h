// GPU topologies of real machines, by GPU index, for tests and benchmarks: as Topology values
// (unit tests), as descriptions the stub NVML reads ($GCR_STUB_NVML) for a simulated host
// (integration tests), and as that host's PCIe layout in sysfs.
//   dgx1       8 GPUs, DGX-1 Volta's hybrid cube mesh of NVLinks (x2 and x1), four PCIe
//              switches, two NUMA nodes
//   nvswitch8  8 GPUs, each with 12 NVLinks to NVSwitches (all pairs equal), PCIe switch pairs
//   pcie4      4 GPUs, no NVLink, two PCIe switches on two NUMA nodes
//   sixteen    16 GPUs, NVLink pairs (x2) with one stronger pair (x4) and x1 links between
//              neighbouring pairs, PCIe switch pairs, two NUMA nodes
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "sim_host.h"
#include "topology/topology.h"

namespace gcr::test {

struct TopologyFixture {
  std::string name;
  unsigned gpus = 0;
  std::vector<std::tuple<unsigned, unsigned, int>> nvlinks;  // i, j, links
  int switch_links = 0;                                      // NVLinks to NVSwitches, each GPU
  std::vector<int> numa;
  std::vector<int> pcie_switch;
  [[nodiscard]] PcieRelation pcie(unsigned i, unsigned j) const;
};

[[nodiscard]] const std::vector<TopologyFixture>& topology_fixtures();
[[nodiscard]] const TopologyFixture& topology_fixture(const std::string& name);

// The fixture as a Topology whose GPU i has UUID "GPU-<i>".
[[nodiscard]] Topology topology_of(const TopologyFixture& fixture);
// A simulated host with the fixture's GPUs, NUMA nodes and PCIe switches.
[[nodiscard]] SimHostOptions host_options(const TopologyFixture& fixture);
// The stub NVML's description of the fixture on `host` (its GPUs by bus).
[[nodiscard]] std::string stub_description(const TopologyFixture& fixture, const SimHost& host);

}  // namespace gcr::test
