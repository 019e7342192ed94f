// GetPreferredAllocation: the set of `size` devices the plugin would choose, answered from
// memory (the topology is read once). The kubelet treats it as advice: a short or empty answer
// is safe, an error is not, so there are none.
//
// [device-plugin] allocation:
//   topology     the best-connected set: NVLinks first, then PCIe closeness, then NUMA
//   packed       the fewest physical GPUs, the most used ones first (leaves whole GPUs free)
//   distributed  as many physical GPUs as possible, the least used first
// Ties go to the set that comes first in device order. Up to 200,000 candidate sets (every set
// of 16 GPUs) are compared exactly; past that the set is grown greedily.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "deviceplugin/devices.h"
#include "topology/topology.h"

namespace gcr {

struct PreferredRequest {
  std::vector<std::string> available;
  std::vector<std::string> must_include;
  int size = 0;
};

// Exactly `size` IDs from `available`, every one of `must_include` among them, or nothing when
// that cannot be (must_include outside available or larger than size, too few devices). With
// replicas-on-distinct-gpus, no two replicas of one GPU.
[[nodiscard]] std::vector<std::string> preferred_allocation(
    const PreferredRequest& request, const std::vector<PluginDevice>& devices,
    const Topology& topology, const Config& config);

// What a chosen set is worth under the policy, compared lexicographically (larger is better);
// exposed so tests can check the choice against every possible set.
[[nodiscard]] std::vector<long> set_worth(const std::vector<const PluginDevice*>& set,
                                          const std::vector<PluginDevice>& devices,
                                          const std::vector<std::string>& available,
                                          const Topology& topology, const Config& config);

}  // namespace gcr
