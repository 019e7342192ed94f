// A JSON reader that refuses everything runc's Go decoder would read differently from us:
// duplicate keys, trailing data, a byte-order mark, invalid UTF-8, lone surrogates, NUL inside
// strings and absurd nesting. It reads in time linear in the input (objects are built without
// a per-key search), builds at most kMaxJsonValues values (each costs tens of bytes however
// short its text: 64 MiB of `[],` would be a gigabyte and more in memory) and keeps what it does
// not need to understand exactly as written: key order, and every number that is not a plain 64-bit
// integer (a fraction, an exponent, -0, a huge integer) as its original text, a "raw number" the
// writer puts back byte for byte.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace gcr {

using Json = nlohmann::ordered_json;

inline constexpr int kMaxJsonDepth = 256;
// Values in one document (every string, number, literal, array and object, members included):
// over it parse_json_strict refuses the document. Real specs hold a few thousand.
inline constexpr std::size_t kMaxJsonValues = std::size_t{1} << 20;

[[nodiscard]] Result<Json> parse_json_strict(std::string_view text);

// Whether the document has a string, a key or a value (escapes decoded), for which `wanted`
// holds, without building the document. Reading stops at the first such string; up to there
// (to the end when there is none) it refuses what parse_json_strict refuses, with the same
// errors, so a document with none is checked whole. It builds nothing, so it counts no values.
[[nodiscard]] Result<bool> json_has_string(std::string_view text,
                                           const std::function<bool(std::string_view)>& wanted);

// An object from members in order, without a per-key search; a repeated key is the error
// "duplicate key `k`".
[[nodiscard]] Result<Json> json_object(std::vector<std::pair<std::string, Json>> members);

// object[key] (`object` made an object when null), added as null when absent. Unlike
// operator[], adding a member never copies the others: ordered_json keeps its members as pairs
// with a const key, so its vector copies every value, deeply, each time it grows. Here the
// members move into a vector twice as large.
Json& object_slot(Json& object, const std::string& key);

// A number kept as written ("1E2", "-0", "1e400", "18446744073709551616"). It is not a JSON
// number to the rest of the code (is_number() is false), so no field we read can be one
// silently converted; the writer emits its text unchanged.
[[nodiscard]] Json raw_number(std::string_view text);
[[nodiscard]] bool is_raw_number(const Json& value);
[[nodiscard]] std::string raw_number_text(const Json& value);

// JSON's two-character escapes: kEscapedChars[i] is written as '\\' kEscapeLetters[i] (the
// reader also takes "\/", the writer never needs it).
inline constexpr std::string_view kEscapedChars = "\"\\\b\f\n\r\t";
inline constexpr std::string_view kEscapeLetters = "\"\\bfnrt";

// The text of a document: nlohmann's layout (indent < 0: compact; otherwise pretty with that
// many spaces), raw numbers as written, invalid UTF-8 (which the reader never lets in)
// replaced by U+FFFD. Never throws. `capacity`: room reserved for the text, for a caller that
// knows about how long it will be (a string that grows by doubling takes new memory, and new
// pages, at each step).
[[nodiscard]] std::string json_text(const Json& value, int indent = -1, std::size_t capacity = 0);

}  // namespace gcr
