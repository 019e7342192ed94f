// YAML CDI specs as JSON documents, strictly: duplicate keys, non-scalar keys, deep nesting
// and alias bombs are errors. Plain scalars follow YAML's core schema (null, booleans,
// integers, floats), but for integers written as the CDI library's YAML 1.1 reader reads them
// (`0666` octal, 0x, 0o and 0b prefixes); quoted scalars stay strings.
#pragma once

#include <string>

#include "base/result.h"
#include "json/strict_json.h"

namespace gcr {

[[nodiscard]] Result<Json> yaml_to_json(const std::string& text);

// Block-style YAML of a JSON document, starting with "---"; a string that would read back as
// something else (a number, a boolean, null) is quoted.
[[nodiscard]] std::string json_to_yaml(const Json& doc);

}  // namespace gcr
