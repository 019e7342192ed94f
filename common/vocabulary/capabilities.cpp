#include "vocabulary/capabilities.h"

namespace gcr {

std::optional<Capability> capability_from_name(std::string_view name) {
  for (Capability cap : kAllCapabilities) {
    if (capability_name(cap) == name) return cap;
  }
  return std::nullopt;
}

std::string_view capability_name(Capability cap) {
  switch (cap) {
    case Capability::kCompute:
      return "compute";
    case Capability::kCompat32:
      return "compat32";
    case Capability::kDisplay:
      return "display";
    case Capability::kGraphics:
      return "graphics";
    case Capability::kNgx:
      return "ngx";
    case Capability::kUtility:
      return "utility";
    case Capability::kVideo:
      return "video";
  }
  return "";
}

CapabilitySet CapabilitySet::all() {
  CapabilitySet set;
  for (Capability cap : kAllCapabilities) set.add(cap);
  return set;
}

std::vector<std::string> CapabilitySet::names() const {
  std::vector<std::string> out;
  for (Capability cap : kAllCapabilities) {
    if (has(cap)) out.emplace_back(capability_name(cap));
  }
  return out;
}

std::string CapabilitySet::to_string() const {
  std::string out;
  for (const auto& name : names()) out += (out.empty() ? "" : ",") + name;
  return out;
}

}  // namespace gcr
