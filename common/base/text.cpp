#include "base/text.h"

#include <algorithm>
#include <cctype>

namespace gcr {

std::string_view trim(std::string_view s) {
  const char* ws = " \t\r\n";
  const auto begin = s.find_first_not_of(ws);
  if (begin == std::string_view::npos) return {};
  const auto end = s.find_last_not_of(ws);
  return s.substr(begin, end - begin + 1);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  // Sized once: a vector grown part by part took a new block at each doubling (a create split
  // paths and lists about 150 times, and made 400 allocations more for it).
  std::vector<std::string_view> parts;
  parts.reserve(static_cast<std::size_t>(std::count(s.begin(), s.end(), sep)) + 1);
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::string to_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::optional<std::uint64_t> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

std::optional<std::uint64_t> parse_go_unsigned(std::string_view s) {
  unsigned base = 10;
  bool prefixed = true;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16, s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
    base = 8, s.remove_prefix(2);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    base = 2, s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8, s.remove_prefix(1);
  } else {
    prefixed = false;
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t value = 0;
  // Go's literal syntax: an underscore between digits, or after the prefix.
  bool underscore_may_come = prefixed;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      if (!underscore_may_come || i + 1 == s.size()) return std::nullopt;
      underscore_may_come = false;
      continue;
    }
    underscore_may_come = true;
    unsigned digit = base;
    if (c >= '0' && c <= '9') digit = static_cast<unsigned>(c - '0');
    if (c >= 'a' && c <= 'f') digit = static_cast<unsigned>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') digit = static_cast<unsigned>(c - 'A' + 10);
    if (digit >= base || value > (UINT64_MAX - digit) / base) return std::nullopt;
    value = value * base + digit;
  }
  return value;
}

std::optional<std::uint32_t> parse_hex(std::string_view s, std::size_t max_digits) {
  if (s.empty() || s.size() > std::min<std::size_t>(max_digits, 8)) return std::nullopt;
  std::uint32_t v = 0;
  for (char c : s) {
    int d = -1;
    if (c >= '0' && c <= '9') d = c - '0';
    if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<std::uint32_t>(d);
  }
  return v;
}

std::string printable(std::string_view s, std::size_t max_len) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max_len) {
      out.append(3, '.');
      break;
    }
    if (c >= 0x20 && c != 0x7f) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    out.push_back('\\');
    if (c == '\n' || c == '\r' || c == '\t') {
      out.push_back(c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
    } else {
      out.push_back('x');
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xf]);
    }
  }
  return out;
}

std::string quote(std::string_view s, std::size_t max_len) {
  std::string out(1, '`');
  out += printable(s, max_len);
  out += '`';
  return out;
}

bool path_is_under(std::string_view path, std::string_view dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
  if (dir == "/") return !path.empty() && path.front() == '/';
  if (path.size() < dir.size() || path.substr(0, dir.size()) != dir) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

namespace {

// Whether clean_path gives `path` back as it is (the usual case, then found without
// allocating): "/", ".", or components that are neither empty, "." nor "..".
bool is_clean(std::string_view path) {
  if (path == "/" || path == ".") return true;
  if (path.empty() || path.back() == '/') return false;
  for (std::size_t start = path.front() == '/' ? 1 : 0; start <= path.size();) {
    const std::size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

std::string clean_path(std::string_view path) {
  if (is_clean(path)) return std::string(path);
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> kept;
  for (std::string_view part : split(path, '/')) {
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (!kept.empty() && kept.back() != "..") {
        kept.pop_back();
      } else if (!absolute) {
        kept.push_back(part);
      }
      continue;
    }
    kept.push_back(part);
  }
  std::string out;
  for (std::string_view part : kept) {
    if (!out.empty() || absolute) out.push_back('/');
    out.append(part.data(), part.size());
  }
  if (out.empty()) out.push_back(absolute ? '/' : '.');
  return out;
}

std::string_view dirname_view(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  return slash == 0 ? path.substr(0, 1) : path.substr(0, slash);
}

std::string dirname_of(const std::string& path) {
  return std::string(dirname_view(path));
}

std::string basename_of(const std::string& path) {
  return path.substr(path.rfind('/') + 1);
}

std::string child_path(std::string_view dir, std::string_view name) {
  // Built in one allocation: the planners call it for every library link of an image.
  const std::size_t dir_size = dir == "/" ? 0 : dir.size();
  std::string path;
  path.reserve(dir_size + 1 + name.size());
  path.append(dir, 0, dir_size).append(1, '/').append(name);
  return path;
}

std::string last_line(std::string_view text) {
  const auto trimmed = trim(text);
  const auto nl = trimmed.rfind('\n');
  return std::string(nl == std::string_view::npos ? trimmed : trimmed.substr(nl + 1));
}

std::string join_root(std::string_view root, std::string_view path) {
  std::string base(root);
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (path.empty() || path.front() != '/') base += '/';
  base += path;
  return base;
}

}  // namespace gcr
