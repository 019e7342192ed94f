#include "labels/nvlink_sets.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>

namespace gcr {
namespace {

using Mask = std::uint64_t;
constexpr std::size_t kMaxGpus = 64;

Mask bit(std::size_t i) {
  return Mask{1} << i;
}

// Bron-Kerbosch with a pivot: every maximal clique of two or more GPUs, keeping the largest.
class LargestCliques {
 public:
  explicit LargestCliques(std::vector<Mask> neighbours) : neighbours_(std::move(neighbours)) {}

  std::vector<Mask> find(Mask all) {
    expand(0, all, 0);
    return largest_;
  }

 private:
  void expand(Mask clique, Mask candidates, Mask excluded) {
    if (candidates == 0 && excluded == 0) {
      keep(clique);
      return;
    }
    const Mask pivot_neighbours = neighbours_[pivot(candidates | excluded, candidates)];
    for (Mask left = candidates & ~pivot_neighbours; left != 0; left &= left - 1) {
      const auto v = static_cast<std::size_t>(std::countr_zero(left));
      expand(clique | bit(v), candidates & neighbours_[v], excluded & neighbours_[v]);
      candidates &= ~bit(v);
      excluded |= bit(v);
    }
  }

  // The vertex of `among` with the most neighbours in `candidates`.
  std::size_t pivot(Mask among, Mask candidates) const {
    std::size_t best = static_cast<std::size_t>(std::countr_zero(among));
    int most = -1;
    for (Mask left = among; left != 0; left &= left - 1) {
      const auto u = static_cast<std::size_t>(std::countr_zero(left));
      const int n = std::popcount(candidates & neighbours_[u]);
      if (n > most) {
        most = n;
        best = u;
      }
    }
    return best;
  }

  void keep(Mask clique) {
    const int size = std::popcount(clique);
    if (size < 2 || size < size_) return;
    if (size > size_) largest_.clear();
    size_ = size;
    largest_.push_back(clique);
  }

  std::vector<Mask> neighbours_;
  std::vector<Mask> largest_;
  int size_ = 0;
};

// The most sets of `cliques` that fit in `free` without sharing a GPU: the lowest free GPU
// is either left out or in one of the sets that hold it.
class Packing {
 public:
  explicit Packing(const std::vector<Mask>& cliques) : cliques_(cliques) {}

  unsigned most(Mask free) {
    if (free == 0) return 0;
    if (const auto known = memo_.find(free); known != memo_.end()) return known->second;
    const Mask lowest = free & (~free + 1);
    unsigned best = most(free & ~lowest);
    for (const Mask c : cliques_) {
      if ((c & lowest) != 0 && (c & ~free) == 0) best = std::max(best, 1 + most(free & ~c));
    }
    memo_.emplace(free, best);
    return best;
  }

 private:
  const std::vector<Mask>& cliques_;
  std::map<Mask, unsigned> memo_;
};

}  // namespace

NvlinkSets nvlink_sets(const Topology& topology, const std::vector<std::size_t>& gpus) {
  const std::size_t n = std::min(gpus.size(), kMaxGpus);
  std::vector<Mask> neighbours(n, 0);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      if (a != b && topology.nvlinks[gpus[a]][gpus[b]] > 0) neighbours[a] |= bit(b);
    }
  }
  const Mask all = n == kMaxGpus ? ~Mask{0} : bit(n) - 1;
  const auto cliques = LargestCliques(std::move(neighbours)).find(all);
  if (cliques.empty()) return {};
  return NvlinkSets{static_cast<unsigned>(std::popcount(cliques.front())),
                    Packing(cliques).most(all)};
}

bool all_on_nvswitch(const Topology& topology, const std::vector<std::size_t>& gpus) {
  return !gpus.empty() && std::all_of(gpus.begin(), gpus.end(), [&](std::size_t i) {
    return i < topology.switch_links.size() && topology.switch_links[i] > 0;
  });
}

}  // namespace gcr
