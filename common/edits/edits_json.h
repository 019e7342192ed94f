// Container edits in their JSON form, CDI's `containerEdits` object (reference/cdi.md §3):
// read strictly (every key known, every type right) and written back.
#pragma once

#include <string>

#include "base/result.h"
#include "edits/edits.h"
#include "json/strict_json.h"

namespace gcr {

// A containerEdits object; `where` names it in messages.
[[nodiscard]] Result<ContainerEdits> edits_from_json(const Json& doc, const std::string& where);

[[nodiscard]] Json edits_to_json(const ContainerEdits& edits);

}  // namespace gcr
