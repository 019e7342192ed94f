// TOML documents (our configuration file, containerd's config): parsing with errors as values,
// and conversion to the JSON model the rest of the code reads. toml++ is compiled once, in
// implementation.cpp; every user includes it through this header.
#pragma once

#include <string>
#include <string_view>

// toml++ 3.3.0 states its parser's assumptions about the input as assertions, compiled to
// __builtin_assume() and __builtin_unreachable() in release builds: an input that breaks one is
// undefined behaviour, and fuzzing finds such inputs. Every user includes toml++ through here,
// so those assumptions are checks in every build: a failed one throws and parse_toml() reports
// the document as invalid.
namespace gcr::toml_detail {
[[noreturn]] void assumption_failed();
}  // namespace gcr::toml_detail
#pragma push_macro("NDEBUG")
#undef NDEBUG
#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : ::gcr::toml_detail::assumption_failed())
#include <toml++/impl/preprocessor.h>
#undef TOML_UNREACHABLE
#define TOML_UNREACHABLE ::gcr::toml_detail::assumption_failed()
#include <toml++/toml.h>
#pragma pop_macro("NDEBUG")

#include "base/result.h"
#include "json/strict_json.h"

namespace gcr {

// Parses a whole document. The error is "invalid TOML at line N: why".
[[nodiscard]] Result<toml::table> parse_toml(std::string_view text, const std::string& source);

// A TOML basic string holding `s`: quotes, backslashes and control characters escaped.
[[nodiscard]] std::string toml_string(std::string_view s);

// Tables become objects (key order kept), arrays arrays, strings, booleans, integers and
// floats the same JSON values; dates and times become null.
[[nodiscard]] Json toml_to_json(const toml::node& node);

}  // namespace gcr
