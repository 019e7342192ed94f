#include "injection/policy.h"

#include <algorithm>

#include "driver/files.h"
#include "vocabulary/capabilities.h"

namespace gcr {
namespace {

bool allowed(const std::string& container_path, const CapabilitySet& supported) {
  const auto needs = capabilities_bringing(container_path);
  if (!needs) return true;
  return std::any_of(kAllCapabilities.begin(), kAllCapabilities.end(),
                     [&](Capability c) { return needs->has(c) && supported.has(c); });
}

}  // namespace

void withhold_unsupported_capabilities(ContainerEdits& edits,
                                       const std::vector<std::string>& supported,
                                       const Logger& logger) {
  CapabilitySet granted;
  for (const auto& name : supported) {
    if (const auto cap = capability_from_name(name)) granted.add(*cap);
  }
  std::vector<std::string> withheld;
  std::erase_if(edits.mounts, [&](const Mount& m) {
    const bool drop = !allowed(m.container_path, granted);
    if (drop) withheld.push_back(m.container_path);
    return drop;
  });
  std::erase_if(edits.device_nodes, [&](const DeviceNode& d) {
    const bool drop = !allowed(d.path, granted);
    if (drop) withheld.push_back(d.path);
    return drop;
  });
  if (withheld.empty()) return;
  std::string list;
  for (const auto& w : withheld) list += (list.empty() ? "" : ", ") + w;
  logger.warning(
      "withheld " + std::to_string(withheld.size()) +
      " file(s) of driver capabilities not in [requests] supported-capabilities: " + list);
}

Status check_hook_programs(const ContainerEdits& edits, TrustCheck& trust) {
  for (const auto& hook : edits.hooks) {
    if (auto s = trust.program(hook.path); !s)
      return Error{"hook program refused: " + s.error().message};
  }
  return {};
}

}  // namespace gcr
