// Applies container edits to an OCI spec with the CDI reference semantics
// (reference/cdi.md §7.2): env replaced in place by name; device nodes checked against the
// host, replaced by path and allowed in the device cgroup; mounts added unless the spec has
// one at that destination, and stably sorted by depth; hooks appended by kind; intelRdt
// replaced; additional GIDs deduplicated.
#pragma once

#include <string>
#include <vector>

#include "base/node_stat.h"
#include "base/result.h"
#include "edits/edits.h"
#include "json/strict_json.h"

namespace gcr {

// One hook as a spec's hooks list holds it (path, args, env, timeout).
[[nodiscard]] Json hook_entry(const Hook& hook);

// Edits `spec` in memory. On error the spec may be partly edited: callers work on a copy. A
// mount the spec already has at an edit's destination is kept (the user's volume wins) unless
// it is the same mount; `kept` receives those destinations. Every hook gets an explicit
// environment (base/child_process.h hook_environment).
[[nodiscard]] Status apply_edits(Json& spec, const ContainerEdits& edits, const NodeStatFn& stat,
                                 std::vector<std::string>& kept);

}  // namespace gcr
