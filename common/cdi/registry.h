// The CDI spec directories as one table of devices (reference/cdi.md §6): later directories
// win, equal-priority duplicates are conflicts and dropped, one bad file does not hide the
// others, and files or directories that a non-root user could have written are refused.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "cdi/spec.h"

namespace gcr {

inline constexpr std::size_t kMaxCdiSpecBytes = 4u << 20;

struct CdiSpecFile {
  std::string path;
  std::size_t priority;  // index of its directory
  CdiSpec spec;
};

struct CdiRegistry {
  std::vector<CdiSpecFile> specs;
  std::map<std::string, std::pair<std::size_t, std::size_t>>
      devices;                      // qualified name -> (spec, device)
  std::vector<std::string> errors;  // "<path>: <why>"
};

// Reads, checks and validates one spec file (.json or .yaml); `trusted` also requires the
// file to be owned by root and not writable by group or others.
[[nodiscard]] Result<CdiSpec> read_cdi_spec_file(const std::string& path, bool trusted);

// One spec's text, checked and validated: JSON where `json`, else YAML.
[[nodiscard]] Result<CdiSpec> parse_cdi_spec_text(const std::string& text, bool json);

// A spec's text in either form, whatever its file is named (the CDI library reads every spec
// file as YAML, of which JSON is a part): as JSON where it starts as a JSON object does (then
// JSON's error, should it be YAML's flow style neither), else as YAML.
[[nodiscard]] Result<CdiSpec> parse_cdi_spec_either(const std::string& text);

[[nodiscard]] CdiRegistry load_cdi_registry(const std::vector<std::string>& dirs);

// The merged edits for `names` in request order (each spec's global edits the first time one
// of its devices is seen, then the device's). Any unresolved name fails the whole request.
[[nodiscard]] Result<ContainerEdits> cdi_edits_for(const CdiRegistry& registry,
                                                   const std::vector<std::string>& names);

}  // namespace gcr
