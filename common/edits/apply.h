// Applies container edits to an OCI spec with the CDI reference semantics
// (reference/cdi.md §7.2): env replaced in place by name; device nodes checked against the
// host, replaced by path and allowed in the device cgroup; mounts replaced by destination and
// stably sorted by depth; hooks appended by kind; intelRdt replaced; additional GIDs deduplicated.
#pragma once

#include "base/node_stat.h"
#include "base/result.h"
#include "edits/edits.h"
#include "json/strict_json.h"

namespace gcr {

// Edits `spec` in memory. On error the spec may be partly edited: callers work on a copy.
[[nodiscard]] Status apply_edits(Json& spec, const ContainerEdits& edits, const NodeStatFn& stat);

}  // namespace gcr
