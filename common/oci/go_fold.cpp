#include "oci/go_fold.h"

#include "base/utf8.h"

namespace gcr {
namespace {

constexpr std::uint32_t kLongS = 0x017f;
constexpr std::uint32_t kKelvin = 0x212a;

char ascii_lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool rune_matches(std::uint32_t rune, char field_char) {
  const char f = ascii_lower(field_char);
  if (rune < 0x80) return ascii_lower(static_cast<char>(rune)) == f;
  return (rune == kLongS && f == 's') || (rune == kKelvin && f == 'k');
}

}  // namespace

bool go_field_matches(std::string_view key, std::string_view field) {
  std::size_t at = 0;
  for (const char f : field) {
    if (at >= key.size()) return false;
    const auto cp = decode_utf8(key, at);
    if (!cp || !rune_matches(cp->value, f)) return false;
    at += cp->length;
  }
  return at == key.size();
}

}  // namespace gcr
