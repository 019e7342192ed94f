// CDI spec files (reference/cdi.md §2-§4, §8): the strict model, validation, and the
// minimum cdiVersion a spec needs. Works on JSON documents; YAML is converted first.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "edits/edits.h"
#include "json/strict_json.h"

namespace gcr {

struct CdiDevice {
  std::string name;
  std::map<std::string, std::string> annotations;
  ContainerEdits edits;
};

struct CdiSpec {
  std::string version;  // as written ("0.5.0", "v0.5.0" is accepted)
  std::string kind;     // vendor/class
  std::map<std::string, std::string> annotations;
  std::vector<CdiDevice> devices;
  ContainerEdits edits;  // applied once when any device of the spec is requested
};

// The structure: every key known, every type right (unknown fields are errors). An integer or
// a boolean where a string goes is its text, as the CDI library reads it (`name: 0`).
[[nodiscard]] Result<CdiSpec> cdi_spec_from_json(Json doc);

// The rules: a known version at least the minimum the content needs, a valid kind, at least
// one device, valid and unique device names, non-empty device edits, and edits that are safe
// to apply (device paths under /dev, absolute hook paths and mount destinations, ...).
[[nodiscard]] Status validate_cdi_spec(const CdiSpec& spec);

// The oldest cdiVersion that holds every field the spec uses.
[[nodiscard]] std::string minimum_cdi_version(const CdiSpec& spec);

// The declared version raised to minimum_cdi_version where it is older (a known version only:
// an unknown one is left for validation to name).
void raise_cdi_version(CdiSpec& spec);

[[nodiscard]] Json cdi_spec_to_json(const CdiSpec& spec);

}  // namespace gcr
