#include "base/utf8.h"

namespace gcr {

std::optional<CodePoint> decode_utf8(std::string_view s, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return CodePoint{lead, 1};
  std::size_t length = 0;
  std::uint32_t cp = 0;
  std::uint32_t min = 0;
  if ((lead & 0xe0) == 0xc0) {
    length = 2, cp = lead & 0x1f, min = 0x80;
  } else if ((lead & 0xf0) == 0xe0) {
    length = 3, cp = lead & 0x0f, min = 0x800;
  } else if ((lead & 0xf8) == 0xf0) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return std::nullopt;
  }
  if (at + length > s.size()) return std::nullopt;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(at + i) & 0xc0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (byte(at + i) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return std::nullopt;
  return CodePoint{cp, length};
}

std::optional<std::size_t> first_invalid_utf8(std::string_view s) {
  std::size_t at = 0;
  while (at < s.size()) {
    if (static_cast<unsigned char>(s[at]) < 0x80) {
      ++at;
      continue;
    }
    const auto cp = decode_utf8(s, at);
    if (!cp) return at;
    at += cp->length;
  }
  return std::nullopt;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  const auto put = [&](std::uint32_t b) { out.push_back(static_cast<char>(b)); };
  if (cp < 0x80) {
    put(cp);
  } else if (cp < 0x800) {
    put(0xc0 | (cp >> 6));
    put(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    put(0xe0 | (cp >> 12));
    put(0x80 | ((cp >> 6) & 0x3f));
    put(0x80 | (cp & 0x3f));
  } else {
    put(0xf0 | (cp >> 18));
    put(0x80 | ((cp >> 12) & 0x3f));
    put(0x80 | ((cp >> 6) & 0x3f));
    put(0x80 | (cp & 0x3f));
  }
}

}  // namespace gcr
