#include "deviceplugin/preferred.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace gcr {
namespace {

// Known, healthy, listed once, in the plugin's device order.
std::vector<const PluginDevice*> candidates(const std::vector<std::string>& available,
                                            const std::vector<PluginDevice>& devices) {
  const std::set<std::string> wanted(available.begin(), available.end());
  std::vector<const PluginDevice*> out;
  for (const auto& d : devices) {
    if (d.healthy && wanted.count(d.id) != 0) out.push_back(&d);
  }
  return out;
}

// The NUMA node to fill first: the first must_include device's, else the one with the most
// candidates (the lowest on a tie).
std::optional<std::int64_t> target_node(const std::vector<const PluginDevice*>& chosen,
                                        const std::vector<const PluginDevice*>& pool) {
  if (!chosen.empty()) return chosen.front()->numa;
  std::map<std::optional<std::int64_t>, int> count;
  for (const auto* d : pool) ++count[d->numa];
  std::optional<std::int64_t> best;
  int most = 0;
  for (const auto& [node, n] : count) {
    if (n > most) best = node, most = n;
  }
  return best;
}

}  // namespace

std::vector<std::string> preferred_allocation(const PreferredRequest& request,
                                              const std::vector<PluginDevice>& devices,
                                              const Config&) {
  if (request.size <= 0 || request.must_include.size() > static_cast<std::size_t>(request.size))
    return {};
  const auto pool = candidates(request.available, devices);
  std::vector<const PluginDevice*> chosen;
  for (const auto& id : request.must_include) {
    const auto it =
        std::find_if(pool.begin(), pool.end(), [&](const PluginDevice* d) { return d->id == id; });
    if (it == pool.end()) return {};
    if (std::find(chosen.begin(), chosen.end(), *it) == chosen.end()) chosen.push_back(*it);
  }
  const auto node = target_node(chosen, pool);
  for (const bool on_node : {true, false}) {
    for (const auto* d : pool) {
      if (chosen.size() == static_cast<std::size_t>(request.size)) break;
      if ((d->numa == node) != on_node) continue;
      if (std::find(chosen.begin(), chosen.end(), d) == chosen.end()) chosen.push_back(d);
    }
  }
  if (chosen.size() != static_cast<std::size_t>(request.size)) return {};
  std::vector<std::string> ids;
  for (const auto* d : chosen) ids.push_back(d->id);
  return ids;
}

}  // namespace gcr
