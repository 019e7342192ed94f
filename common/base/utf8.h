// UTF-8 as the inputs we read must hold it: shortest forms only, no surrogates, nothing above
// U+10FFFF.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gcr {

struct CodePoint {
  std::uint32_t value;
  std::size_t length;  // bytes it took
};

// The code point starting at s[at]; nullopt when the bytes there are not valid UTF-8.
[[nodiscard]] std::optional<CodePoint> decode_utf8(std::string_view s, std::size_t at);

// The offset of the first invalid byte sequence; nullopt when all of `s` is valid.
[[nodiscard]] std::optional<std::size_t> first_invalid_utf8(std::string_view s);

// Appends the UTF-8 encoding of `cp` (a valid scalar value) to `out`.
void append_utf8(std::string& out, std::uint32_t cp);

}  // namespace gcr
