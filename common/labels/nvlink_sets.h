// Sets of GPUs that are all pairwise NVLink-connected (cliques of the NVLink graph), for the
// labels a scheduler can match a multi-GPU pod against.
#pragma once

#include <cstddef>
#include <vector>

#include "topology/topology.h"

namespace gcr {

struct NvlinkSets {
  unsigned largest = 0;  // GPUs in the largest set of two or more; 0 when no two share an NVLink
  unsigned count = 0;    // how many sets of that size the GPUs hold at once, none sharing a GPU
};

// The sets among `gpus` (indices into the topology; at most 64 are considered).
[[nodiscard]] NvlinkSets nvlink_sets(const Topology& topology,
                                     const std::vector<std::size_t>& gpus);

// Whether every one of `gpus` (at least one) has NVLinks to NVSwitches.
[[nodiscard]] bool all_on_nvswitch(const Topology& topology, const std::vector<std::size_t>& gpus);

}  // namespace gcr
