#include "vocabulary/cdi_name.h"

namespace gcr {
namespace {

bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alnum(char c) {
  return is_letter(c) || is_digit(c);
}

// first char `first`, last char alnum, middle chars alnum or one of `extra`.
template <class First>
bool follows_rules(std::string_view s, First first, std::string_view extra) {
  if (s.empty() || !first(s.front()) || !is_alnum(s.back())) return false;
  for (char c : s.substr(1)) {
    if (!is_alnum(c) && extra.find(c) == std::string_view::npos) return false;
  }
  return true;
}

}  // namespace

bool is_valid_vendor(std::string_view s) {
  return follows_rules(s, is_letter, "_-.");
}
bool is_valid_class(std::string_view s) {
  return follows_rules(s, is_letter, "_-.");
}
bool is_valid_device_name(std::string_view s) {
  return follows_rules(s, is_alnum, "_-.:");
}

bool is_valid_kind(std::string_view kind) {
  const auto slash = kind.find('/');
  if (slash == std::string_view::npos) return false;
  return is_valid_vendor(kind.substr(0, slash)) && is_valid_class(kind.substr(slash + 1));
}

std::optional<QualifiedName> parse_qualified_name(std::string_view text) {
  if (text.empty() || text.front() == '/') return std::nullopt;
  const auto eq = text.find('=');
  if (eq == std::string_view::npos) return std::nullopt;
  const auto kind = text.substr(0, eq);
  const auto name = text.substr(eq + 1);
  const auto slash = kind.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  QualifiedName q{std::string(kind.substr(0, slash)), std::string(kind.substr(slash + 1)),
                  std::string(name)};
  if (!is_valid_vendor(q.vendor) || !is_valid_class(q.device_class) ||
      !is_valid_device_name(q.name)) {
    return std::nullopt;
  }
  return q;
}

}  // namespace gcr
