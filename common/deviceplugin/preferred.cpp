#include "deviceplugin/preferred.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>

namespace gcr {
namespace {

constexpr double kExactLimit = 200000;

using Worth = std::array<long, 3>;

// A candidate device with what choosing needs, computed once per call.
struct Candidate {
  const PluginDevice* device;
  std::size_t slot;    // its physical GPU, numbered among the candidates' GPUs
  std::size_t handed;  // what the runtime is handed (replicas share it), numbered likewise
  long used;           // devices of that GPU in use (advertised, not available)
};

// A set being built: its members and the sums its worth is made of, kept up to date as members
// come and go so that comparing a set costs nothing.
struct Partial {
  std::vector<std::size_t> members;  // candidate indexes
  std::vector<int> per_slot;         // members on each physical GPU
  std::vector<int> per_device;       // members on each device the runtime is handed
  long links = 0;                    // the pair scores of its members' GPUs
  long gpus = 0;                     // physical GPUs it spans
  long usage = 0;                    // devices in use on those GPUs
};

class Chooser {
 public:
  Chooser(const std::vector<PluginDevice>& devices, const std::vector<std::string>& available,
          const Topology& topology, const Config& config)
      : config_(config) {
    const std::set<std::string> free(available.begin(), available.end());
    std::map<std::string, long> used;
    for (const auto& d : devices) {
      if (free.count(d.id) == 0) ++used[d.uuid];
    }
    std::map<std::string, std::size_t> slots;
    std::map<std::string, std::size_t> runtime_devices;
    std::vector<std::optional<std::size_t>> in_topology;  // per slot
    std::set<std::string> seen;
    for (const auto& d : devices) {
      if (!d.healthy || free.count(d.id) == 0 || !seen.insert(d.id).second) continue;
      const auto [at, fresh] = slots.emplace(d.uuid, slots.size());
      if (fresh) in_topology.push_back(topology.index_of(d.uuid));
      const auto handed = runtime_devices.emplace(d.gpu_id, runtime_devices.size()).first->second;
      candidates_.push_back(Candidate{&d, at->second, handed, used[d.uuid]});
    }
    // Per pair of GPUs, not of candidates: 8 GPUs of 1,024 replicas each are 64 pairs, where
    // pairs of candidates were 67 million.
    slots_ = slots.size();
    pair_.assign(slots_ * slots_, 0);
    for (std::size_t a = 0; a < slots_; ++a) {
      for (std::size_t b = 0; b < slots_; ++b) {
        const auto& ta = in_topology[a];
        const auto& tb = in_topology[b];
        if (ta && tb && *ta != *tb) pair_[a * slots_ + b] = topology.pair_score(*ta, *tb);
      }
    }
  }

  [[nodiscard]] const std::vector<Candidate>& candidates() const { return candidates_; }
  [[nodiscard]] bool distinct() const {
    return config_.device_plugin.replicas_on_distinct_gpus && !config_.mps();
  }
  [[nodiscard]] std::optional<std::size_t> find(const std::string& id) const {
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      if (candidates_[i].device->id == id) return i;
    }
    return std::nullopt;
  }

  [[nodiscard]] Partial empty_set() const {
    Partial p;
    p.per_slot.assign(candidates_.size(), 0);
    p.per_device.assign(candidates_.size(), 0);
    return p;
  }

  [[nodiscard]] long pair(std::size_t a, std::size_t b) const {
    return pair_[candidates_[a].slot * slots_ + candidates_[b].slot];
  }

  void add(Partial& p, std::size_t c) const {
    for (const auto m : p.members) p.links += pair(c, m);
    ++p.per_device[candidates_[c].handed];
    if (p.per_slot[candidates_[c].slot]++ == 0) {
      ++p.gpus;
      p.usage += candidates_[c].used;
    }
    p.members.push_back(c);
  }

  void remove_last(Partial& p) const {
    const auto c = p.members.back();
    p.members.pop_back();
    for (const auto m : p.members) p.links -= pair(c, m);
    --p.per_device[candidates_[c].handed];
    if (--p.per_slot[candidates_[c].slot] == 0) {
      --p.gpus;
      p.usage -= candidates_[c].used;
    }
  }

  [[nodiscard]] Worth worth(const Partial& p) const {
    const auto& policy = config_.device_plugin.allocation;
    // MPS shares of one request come from one GPU (Allocate refuses more): always packed.
    if (policy == "packed" || config_.mps()) return {-p.gpus, p.usage, p.links};
    if (policy == "distributed") return {p.gpus, -p.usage, p.links};
    return {p.links, p.gpus, -p.usage};
  }

  // Whether candidate `c` may join `p` (no second replica of one device when they must differ).
  [[nodiscard]] bool fits(const Partial& p, std::size_t c) const {
    return !distinct() || p.per_device[candidates_[c].handed] == 0;
  }

 private:
  const Config& config_;
  std::vector<Candidate> candidates_;
  std::size_t slots_ = 0;   // the candidates' physical GPUs
  std::vector<long> pair_;  // slots × slots: the score of two GPUs' link
};

double combinations(std::size_t n, std::size_t k) {
  double c = 1;
  for (std::size_t i = 0; i < k; ++i)
    c = c * static_cast<double>(n - i) / static_cast<double>(i + 1);
  return c;
}

struct Best {
  std::vector<std::size_t> members;
  Worth worth{};
};

// Every way to add `left` of pool[from..] to `p`, keeping the best (first on ties).
void search(const Chooser& chooser, const std::vector<std::size_t>& pool, std::size_t from,
            std::size_t left, Partial& p, Best& best) {
  if (left == 0) {
    const auto w = chooser.worth(p);
    if (best.members.empty() || w > best.worth) best = Best{p.members, w};
    return;
  }
  for (std::size_t i = from; i + left <= pool.size(); ++i) {
    if (!chooser.fits(p, pool[i])) continue;
    chooser.add(p, pool[i]);
    search(chooser, pool, i + 1, left - 1, p, best);
    chooser.remove_last(p);
  }
}

// The set grown one device at a time, each time the one that makes it worth most.
std::vector<std::size_t> greedy(const Chooser& chooser, const std::vector<std::size_t>& pool,
                                std::size_t left, Partial& p) {
  std::vector<bool> taken(chooser.candidates().size(), false);
  for (const auto m : p.members) taken[m] = true;
  for (; left > 0; --left) {
    std::optional<std::size_t> pick;
    Worth pick_worth{};
    for (const auto c : pool) {
      if (taken[c] || !chooser.fits(p, c)) continue;
      chooser.add(p, c);
      const auto w = chooser.worth(p);
      chooser.remove_last(p);
      if (!pick || w > pick_worth) pick = c, pick_worth = w;
    }
    if (!pick) return {};
    chooser.add(p, *pick);
    taken[*pick] = true;
  }
  return p.members;
}

// MPS: a request's shares all come from one GPU (Allocate refuses shares of two), the busiest
// that has room for them all and for what `p` must include. Growing the set share by share
// would take the busiest GPU's last free share first and then have to go to a second GPU.
std::vector<std::size_t> shares_of_one_gpu(const Chooser& chooser,
                                           const std::vector<std::size_t>& pool, std::size_t left,
                                           Partial& p) {
  const auto& candidates = chooser.candidates();
  if (p.gpus > 1) return {};
  if (left == 0) return p.members;
  const std::optional<std::size_t> needed =
      p.members.empty() ? std::nullopt : std::optional(candidates[p.members.front()].slot);
  std::map<std::size_t, std::vector<std::size_t>> by_gpu;
  for (const auto c : pool) {
    if (!needed || candidates[c].slot == *needed) by_gpu[candidates[c].slot].push_back(c);
  }
  const std::vector<std::size_t>* best = nullptr;
  for (const auto& [slot, shares] : by_gpu) {
    if (shares.size() < left) continue;
    if (best == nullptr || candidates[shares.front()].used > candidates[best->front()].used)
      best = &shares;
  }
  if (best == nullptr) return {};
  for (std::size_t i = 0; i < left; ++i) chooser.add(p, (*best)[i]);
  return p.members;
}

}  // namespace

std::vector<long> set_worth(const std::vector<const PluginDevice*>& set,
                            const std::vector<PluginDevice>& devices,
                            const std::vector<std::string>& available, const Topology& topology,
                            const Config& config) {
  const Chooser chooser(devices, available, topology, config);
  auto p = chooser.empty_set();
  for (const auto* d : set) {
    if (const auto c = chooser.find(d->id)) chooser.add(p, *c);
  }
  const auto w = chooser.worth(p);
  return {w.begin(), w.end()};
}

std::vector<std::string> preferred_allocation(const PreferredRequest& request,
                                              const std::vector<PluginDevice>& devices,
                                              const Topology& topology, const Config& config) {
  if (request.size <= 0 || request.must_include.size() > static_cast<std::size_t>(request.size))
    return {};
  const Chooser chooser(devices, request.available, topology, config);
  auto p = chooser.empty_set();
  std::vector<bool> in_set(chooser.candidates().size(), false);
  for (const auto& id : request.must_include) {
    const auto c = chooser.find(id);
    if (!c) return {};
    if (in_set[*c]) continue;
    if (!chooser.fits(p, *c)) return {};
    chooser.add(p, *c);
    in_set[*c] = true;
  }
  // The pool: the other candidates; of interchangeable replicas only the first.
  std::vector<std::size_t> pool;
  std::set<std::size_t> devices_in_pool;
  for (std::size_t c = 0; c < chooser.candidates().size(); ++c) {
    if (in_set[c] || !chooser.fits(p, c)) continue;
    if (chooser.distinct() && !devices_in_pool.insert(chooser.candidates()[c].handed).second)
      continue;
    pool.push_back(c);
  }
  const std::size_t left = static_cast<std::size_t>(request.size) - p.members.size();
  if (pool.size() < left) return {};
  std::vector<std::size_t> chosen;
  if (config.mps()) {
    chosen = shares_of_one_gpu(chooser, pool, left, p);
  } else if (combinations(pool.size(), left) <= kExactLimit) {
    Best best;
    search(chooser, pool, 0, left, p, best);
    chosen = std::move(best.members);
  } else {
    chosen = greedy(chooser, pool, left, p);
  }
  if (chosen.size() != static_cast<std::size_t>(request.size)) return {};
  std::vector<std::string> ids;
  for (const auto c : chosen) ids.push_back(chooser.candidates()[c].device->id);
  return ids;
}

}  // namespace gcr
