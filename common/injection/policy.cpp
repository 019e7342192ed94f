#include "injection/policy.h"

#include <algorithm>
#include <set>
#include <utility>

#include "base/text.h"
#include "driver/files.h"
#include "hooks/container_hooks.h"
#include "vocabulary/capabilities.h"

namespace gcr {
namespace {

bool allowed(const std::string& container_path, const CapabilitySet& supported) {
  const auto needs = capabilities_bringing(container_path);
  if (!needs) return true;
  return std::any_of(kAllCapabilities.begin(), kAllCapabilities.end(),
                     [&](Capability c) { return needs->has(c) && supported.has(c); });
}

// "libGLX_nvidia.so.550.54.15" -> "libGLX_nvidia.so": the library a file or a link names,
// whatever version suffix it carries.
std::string library_stem(const std::string& name) {
  const auto at = name.find(".so");
  return at == std::string::npos ? name : name.substr(0, at + 3);
}

// A withheld file's directory and library: the links hooks would make to it (or to its
// soname) there would dangle.
using WithheldLibrary = std::pair<std::string, std::string>;

bool links_to_withheld(const std::string& spec, const std::set<WithheldLibrary>& withheld) {
  auto link = parse_link_spec(spec);
  if (!link) return false;
  const std::string target =
      link->target.front() == '/' ? link->target : dirname_of(link->link) + "/" + link->target;
  return withheld.count({dirname_of(target), library_stem(basename_of(target))}) != 0;
}

// Takes `--link TARGET::LINK` pairs whose target is a withheld file out of every hook.
void drop_links_to_withheld(std::vector<Hook>& hooks, const std::vector<std::string>& paths) {
  std::set<WithheldLibrary> withheld;
  for (const auto& p : paths) withheld.insert({dirname_of(p), library_stem(basename_of(p))});
  for (auto& hook : hooks) {
    std::vector<std::string> kept;
    for (std::size_t i = 0; i < hook.args.size(); ++i) {
      if (hook.args[i] == "--link" && i + 1 < hook.args.size() &&
          links_to_withheld(hook.args[i + 1], withheld)) {
        ++i;
        continue;
      }
      kept.push_back(hook.args[i]);
    }
    hook.args = std::move(kept);
  }
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
  drop_links_to_withheld(edits.hooks, withheld);
  std::string list;
  for (const auto& w : withheld) list += (list.empty() ? "" : ", ") + w;
  logger.warning(
      "withheld " + std::to_string(withheld.size()) +
      " file(s) of driver capabilities not in [requests] supported-capabilities: " + list);
}

Status check_hook_programs(const ContainerEdits& edits, FileTrust& trust) {
  for (const auto& hook : edits.hooks) {
    if (auto s = trust.program(hook.path); !s)
      return Error{"hook program refused: " + s.error().message};
  }
  return {};
}

Status check_no_mig_management(const ContainerEdits& edits, DeviceNodes& devices,
                               const NodeStatFn& stat) {
  if (edits.device_nodes.empty()) return {};
  auto minors = devices.mig_minors();
  if (!minors) return {};  // no MIG capabilities on this driver
  for (const auto& [minor, what] :
       {std::pair{minors->config, "config"}, std::pair{minors->monitor, "monitor"}}) {
    if (!minor) continue;
    auto cap = devices.cap_node(*minor);
    if (!cap) continue;
    for (const auto& node : edits.device_nodes) {
      const std::string host_path = node.host_path.empty() ? node.path : node.host_path;
      std::optional<std::pair<std::int64_t, std::int64_t>> numbers;
      if (node.major && node.minor) {
        numbers.emplace(*node.major, *node.minor);
      } else if (auto st = stat(host_path); st && st->type == 'c') {
        numbers.emplace(st->major, st->minor);
      }
      if (numbers && *numbers == std::pair{*cap->major, *cap->minor})
        return Error{std::string("the MIG ") + what + " capability " + node.path +
                     " needs a privileged container (CAP_SYS_ADMIN)"};
    }
  }
  return {};
}

}  // namespace gcr
