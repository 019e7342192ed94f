// The parts of an OCI spec the shim decides on (environment, capabilities, mounts,
// annotations), read with the shape checks that keep our view equal to runc's: a field of the
// wrong type, a case variant of a spec key (Go's decoder would merge it), an env entry runc
// rejects, are errors rather than something we silently read differently.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "json/strict_json.h"

namespace gcr {

struct SpecMount {
  std::string source;
  std::string destination;
};

// A prestart or createRuntime hook: what it runs.
struct SpecHook {
  std::string path;
  std::vector<std::string> args;
};

struct SpecView {
  std::map<std::string, std::string> env;  // duplicate names: the last one wins, as in runc
  bool privileged = false;                 // CAP_SYS_ADMIN in process.capabilities.bounding
  std::vector<SpecMount> mounts;
  std::vector<std::pair<std::string, std::string>> annotations;  // in the spec's order
  // `hooks.prestart`, then `hooks.createRuntime`: where containerd's ctr --gpus puts its hook
  // (1.x in prestart, 2.1 in createRuntime: the OCI spec deprecated prestart)
  std::vector<SpecHook> runtime_hooks;
  std::string root_path;
};

[[nodiscard]] Result<SpecView> view_spec(const Json& spec);

}  // namespace gcr
