#include "topology_fixtures.h"

#include <stdexcept>

namespace gcr::test {
namespace {

std::vector<int> halves(unsigned n) {
  std::vector<int> out;
  for (unsigned i = 0; i < n; ++i) out.push_back(i < n / 2 ? 0 : 1);
  return out;
}

std::vector<int> switch_pairs(unsigned n) {
  std::vector<int> out;
  for (unsigned i = 0; i < n; ++i) out.push_back(static_cast<int>(i / 2));
  return out;
}

TopologyFixture dgx1() {
  TopologyFixture f{"dgx1", 8, {}, 0, halves(8), switch_pairs(8)};
  for (auto [i, j] :
       {std::pair{0u, 3u}, {0u, 4u}, {1u, 2u}, {1u, 5u}, {2u, 3u}, {4u, 7u}, {5u, 6u}, {6u, 7u}})
    f.nvlinks.emplace_back(i, j, 2);
  for (auto [i, j] :
       {std::pair{0u, 1u}, {0u, 2u}, {1u, 3u}, {2u, 6u}, {3u, 7u}, {4u, 5u}, {4u, 6u}, {5u, 7u}})
    f.nvlinks.emplace_back(i, j, 1);
  return f;
}

TopologyFixture sixteen() {
  TopologyFixture f{"sixteen", 16, {}, 0, halves(16), switch_pairs(16)};
  for (unsigned p = 0; p < 16; p += 2) f.nvlinks.emplace_back(p, p + 1, p == 10 ? 4 : 2);
  for (unsigned p = 0; p + 2 < 16; p += 2) f.nvlinks.emplace_back(p + 1, p + 2, 1);
  return f;
}

}  // namespace

PcieRelation TopologyFixture::pcie(unsigned i, unsigned j) const {
  if (pcie_switch[i] == pcie_switch[j]) return PcieRelation::kSingleSwitch;
  if (numa[i] == numa[j]) return PcieRelation::kHostBridge;
  return PcieRelation::kSystem;
}

const std::vector<TopologyFixture>& topology_fixtures() {
  static const std::vector<TopologyFixture> all = {
      dgx1(),
      TopologyFixture{"nvswitch8", 8, {}, 12, halves(8), switch_pairs(8)},
      TopologyFixture{"pcie4", 4, {}, 0, {0, 0, 1, 1}, {0, 0, 1, 1}},
      sixteen(),
  };
  return all;
}

const TopologyFixture& topology_fixture(const std::string& name) {
  for (const auto& f : topology_fixtures()) {
    if (f.name == name) return f;
  }
  throw std::runtime_error("no topology fixture " + name);
}

Topology topology_of(const TopologyFixture& f) {
  Topology t;
  t.source = "fixture " + f.name;
  t.nvlinks.assign(f.gpus, std::vector<int>(f.gpus, 0));
  t.pcie.assign(f.gpus, std::vector<PcieRelation>(f.gpus, PcieRelation::kSystem));
  t.switch_links.assign(f.gpus, f.switch_links);
  for (unsigned i = 0; i < f.gpus; ++i) {
    t.uuids.push_back("GPU-" + std::to_string(i));
    t.numa.push_back(f.numa[i]);
    for (unsigned j = 0; j < f.gpus; ++j) {
      if (i == j) continue;
      t.pcie[i][j] = f.pcie(i, j);
      t.nvlinks[i][j] = f.switch_links;
    }
  }
  for (const auto& [i, j, n] : f.nvlinks) t.nvlinks[i][j] = t.nvlinks[j][i] = n;
  return t;
}

SimHostOptions host_options(const TopologyFixture& f) {
  SimHostOptions options;
  options.gpus = f.gpus;
  options.numa = f.numa;
  options.pcie_switch = f.pcie_switch;
  return options;
}

std::string stub_description(const TopologyFixture& f, const SimHost& host) {
  const auto bus = [&](unsigned i) { return host.gpus().at(i).bus.substr(5, 2); };
  std::string out = "# " + f.name + "\n";
  for (const auto& [i, j, n] : f.nvlinks)
    out += "nvlink " + bus(i) + " " + bus(j) + " " + std::to_string(n) + "\n";
  for (unsigned i = 0; i < f.gpus; ++i) {
    if (f.switch_links > 0)
      out += "nvswitch " + bus(i) + " " + std::to_string(f.switch_links) + "\n";
    for (unsigned j = i + 1; j < f.gpus; ++j)
      out += "pcie " + bus(i) + " " + bus(j) + " " +
             std::to_string(static_cast<int>(f.pcie(i, j))) + "\n";
  }
  return out;
}

}  // namespace gcr::test
