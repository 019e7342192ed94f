#include "toml/toml.h"

#include <utility>
#include <vector>

#include "base/text.h"
#include "base/utf8.h"

namespace gcr {
namespace {

// What toml++ 3.3.0 (Debian 12's) may not survive, refused before it sees the text: nesting
// deeper than this (its parser recurses), control characters other than tab and line ends (a
// form feed in a key reaches an assertion), and non-ASCII bytes outside strings and comments
// (some non-ASCII table names reach __builtin_unreachable()). None of these is valid TOML 1.0.
constexpr int kMaxTomlDepth = 64;
constexpr std::size_t kMaxDottedKeyParts = 64;

bool is_control(unsigned char c) {
  return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
}

// A scan of TOML's lexical structure: comments, the four string forms, and everything else,
// where brackets and braces nest and dots join key parts. It also notes where each comment is:
// once it has checked them, toml++ need not read them (it reads a character at a time, at about
// 150 instructions each, and a shipped configuration file is mostly comments).
class Prescan {
 public:
  explicit Prescan(std::string_view text) : s_(text) {}

  // The text with every comment removed, line ends kept (so are the lines and columns of all
  // else, for toml++'s messages). Only after run() succeeded.
  [[nodiscard]] std::string without_comments() const {
    std::string out;
    out.reserve(s_.size());
    std::size_t from = 0;
    for (const auto& [begin, end] : comments_) {
      out.append(s_.substr(from, begin - from));
      from = end;
    }
    out.append(s_.substr(from));
    return out;
  }

  Status run() {
    if (auto bad = first_invalid_utf8(s_)) return fail(*bad, "invalid UTF-8");
    while (at_ < s_.size()) {
      const auto c = static_cast<unsigned char>(s_[at_]);
      if (is_control(c)) return fail(at_, "a control character");
      if (auto s = step(c); !s) return s;
    }
    return {};
  }

 private:
  Error fail(std::size_t at, const std::string& what) const {
    const auto line =
        1 + std::count(s_.begin(), s_.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    return Error{"invalid TOML at line " + std::to_string(line) + ": " + what};
  }

  Status step(unsigned char c) {
    if (c == '#') return skip_comment();
    if (c == '"' || c == '\'') return skip_string(static_cast<char>(c));
    if (c >= 0x80) return fail(at_, "a non-ASCII character outside a string or comment");
    if (c == '[' || c == '{') {
      if (++depth_ > kMaxTomlDepth)
        return fail(at_, "nesting deeper than " + std::to_string(kMaxTomlDepth) + " levels");
    } else if ((c == ']' || c == '}') && depth_ > 0) {
      --depth_;
    }
    if (c == '\n' || c == ',' || c == '=' || c == '[' || c == '{') dots_ = 0;
    if (c == '.' && ++dots_ >= kMaxDottedKeyParts)
      return fail(at_, "a key of more than " + std::to_string(kMaxDottedKeyParts) + " parts");
    ++at_;
    return {};
  }

  // A comment runs to its line end (CRLF or LF), which stays; a lone CR ends no line.
  Status skip_comment() {
    comments_.emplace_back(at_, 0);
    while (at_ < s_.size() && s_[at_] != '\n') {
      if (s_[at_] == '\r') {
        if (s_.substr(at_, 2) == "\r\n") break;
        return fail(at_, "a carriage return without a line feed");
      }
      if (is_control(static_cast<unsigned char>(s_[at_]))) return fail(at_, "a control character");
      ++at_;
    }
    comments_.back().second = at_;
    return {};
  }

  // Strings may hold any text but control characters; a basic string's escapes are skipped
  // whole so an escaped quote does not end it.
  Status skip_string(char quote) {
    const std::string triple(3, quote);
    const bool multiline = s_.substr(at_, 3) == triple;
    at_ += multiline ? 3 : 1;
    while (at_ < s_.size()) {
      const char c = s_[at_];
      if (c == '\\' && quote == '"') {
        at_ += 2;
        continue;
      }
      if (c == quote && (!multiline || s_.substr(at_, 3) == triple)) {
        at_ += multiline ? 3 : 1;
        while (multiline && at_ < s_.size() && s_[at_] == quote) ++at_;  // """a"""" ends in a quote
        return {};
      }
      if (c == '\n' && !multiline) return {};  // toml++ reports the unterminated string
      if (is_control(static_cast<unsigned char>(c))) return fail(at_, "a control character");
      ++at_;
    }
    return {};
  }

  std::string_view s_;
  std::vector<std::pair<std::size_t, std::size_t>> comments_;  // [from, to) of each, in order
  std::size_t at_ = 0;
  int depth_ = 0;
  std::size_t dots_ = 0;
};

struct AssumptionFailed {};

}  // namespace

namespace toml_detail {

void assumption_failed() {
  throw AssumptionFailed{};
}

}  // namespace toml_detail

Result<toml::table> parse_toml(std::string_view text, const std::string& source) {
  Prescan prescan(text);
  if (auto s = prescan.run(); !s) return s.error();
  try {
    return toml::parse(prescan.without_comments(), source);
  } catch (const toml::parse_error& e) {
    return Error{"invalid TOML at line " + std::to_string(e.source().begin.line) + ": " +
                 printable(e.description())};
  } catch (const AssumptionFailed&) {
    return Error{"invalid TOML: not a document toml++ can read safely"};
  }
}

std::string toml_string(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out(1, '"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\u00";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xf]);
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
  return out;
}

std::string toml_value_text(const Json& v) {
  if (v.is_string()) return toml_string(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_array()) {
    std::string out = "[";
    for (const auto& e : v) out += (out.size() > 1 ? ", " : "") + toml_value_text(e);
    return out + "]";
  }
  return v.dump();
}

Json toml_to_json(const toml::node& node) {
  if (const auto* table = node.as_table()) {
    std::vector<std::pair<std::string, Json>> members;
    for (const auto& [key, value] : *table) members.emplace_back(key.str(), toml_to_json(value));
    return json_object(std::move(members)).value();  // a TOML table's keys are unique
  }
  if (const auto* array = node.as_array()) {
    Json out = Json::array();
    for (const auto& value : *array) out.push_back(toml_to_json(value));
    return out;
  }
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* b = node.as_boolean()) return b->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  return nullptr;
}

}  // namespace gcr
