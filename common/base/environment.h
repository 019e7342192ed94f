// The process environment behind a seam: code that reads variables takes a function of this
// shape, and tests hand it a map.
#pragma once

#include <optional>
#include <string>

namespace gcr {

// getenv's answer: nullopt when `name` is not set, its value (perhaps empty) when it is.
[[nodiscard]] std::optional<std::string> environment_variable(const std::string& name);

}  // namespace gcr
