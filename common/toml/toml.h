// TOML documents (our configuration file, containerd's config): parsing with errors as values,
// and conversion to the JSON model the rest of the code reads. toml++ is compiled once, in
// implementation.cpp; every user includes it through this header.
#pragma once

#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "base/result.h"
#include "json/strict_json.h"

namespace gcr {

// Parses a whole document. The error is "invalid TOML at line N: why".
[[nodiscard]] Result<toml::table> parse_toml(std::string_view text, const std::string& source);

// Tables become objects (key order kept), arrays arrays, strings, booleans, integers and
// floats the same JSON values; dates and times become null.
[[nodiscard]] Json toml_to_json(const toml::node& node);

}  // namespace gcr
