// A JSON reader that refuses everything runc's Go decoder would read differently from us:
// duplicate keys, trailing data, a byte-order mark, invalid UTF-8, NUL inside strings and
// absurd nesting. Key order and integer precision survive (ordered_json, int64/uint64).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace gcr {

using Json = nlohmann::ordered_json;

inline constexpr int kMaxJsonDepth = 256;

[[nodiscard]] Result<Json> parse_json_strict(std::string_view text);

}  // namespace gcr
