// Shared by the libFuzzer targets: each file defines LLVMFuzzerTestOneInput for one parser and
// checks what must hold for every input (no crash, and the properties named in the file).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace gcr::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Parts of the input separated by `sep` (NUL for argv, newline for env lists).
inline std::vector<std::string> parts_of(std::string_view text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find(sep, start);
    out.emplace_back(text.substr(start, end == std::string_view::npos ? text.npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

// A property that must hold; a failed one is a crash libFuzzer reports with the input.
inline void require(bool holds) {
  if (!holds) std::abort();
}

}  // namespace gcr::fuzz
