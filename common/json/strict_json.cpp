#include "json/strict_json.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "base/text.h"
#include "base/utf8.h"

namespace gcr {
namespace {

constexpr std::uint8_t kRawNumberSubtype = 0x4e;  // 'N'

// A recursive-descent reader over the bytes of one document. Recursion is bounded by
// kMaxJsonDepth; every other step is a loop, so the time is linear in the input. `Out` makes
// the values: a document (JsonOut), or nothing but a look at each string (StringScan); the
// grammar and every refusal are the same for both. Reading stops early when `Out` is done
// (StringScan has found its string).
template <class Out>
class Reader {
  using Value = typename Out::Value;

 public:
  Reader(std::string_view text, Out& out) : s_(text), out_(out) {}

  Result<Value> document() {
    skip_space();
    auto value = this->value(0);
    if (!value || out_.done()) return value;
    skip_space();
    if (at_ < s_.size()) return syntax("data after the document");
    return value;
  }

 private:
  Error syntax(const std::string& why) const {
    const std::size_t upto = std::min(at_, s_.size());
    const auto line =
        1 + std::count(s_.begin(), s_.begin() + static_cast<std::ptrdiff_t>(upto), '\n');
    return Error{"not valid JSON at line " + std::to_string(line) + " (byte " +
                 std::to_string(upto + 1) + "): " + why};
  }

  bool at_end() const { return at_ >= s_.size(); }
  char peek() const { return s_[at_]; }

  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++at_;
  }

  Result<Value> value(int depth) {
    if (at_end()) return syntax("the document ends early");
    if (auto counted = out_.count_value(); !counted) return counted.error();
    switch (peek()) {
      case '{':
        return object(depth + 1);
      case '[':
        return array(depth + 1);
      case '"': {
        auto text = string();
        if (!text) return text.error();
        if (text->find('\0') != std::string::npos)
          return Error{"a string contains a NUL character"};
        return out_.string(std::move(*text));
      }
      case 't':
        return literal("true", out_.boolean(true));
      case 'f':
        return literal("false", out_.boolean(false));
      case 'n':
        return literal("null", out_.null());
      default:
        return number();
    }
  }

  Result<Value> literal(std::string_view word, Value value) {
    if (s_.substr(at_, word.size()) != word) return syntax("unexpected character");
    at_ += word.size();
    return value;
  }

  Result<Value> object(int depth) {
    if (depth > kMaxJsonDepth) return Error{"nesting deeper than 256 levels"};
    ++at_;  // {
    std::vector<std::pair<std::string, Value>> members;
    skip_space();
    if (!at_end() && peek() == '}') {
      ++at_;
      return out_.object(std::move(members));
    }
    while (true) {
      skip_space();
      if (at_end() || peek() != '"') return syntax("expected a key");
      auto key = string();
      if (!key) return key.error();
      if (key->find('\0') != std::string::npos) return Error{"a key contains a NUL character"};
      out_.key(*key);
      if (out_.done()) return Value{};
      skip_space();
      if (at_end() || peek() != ':') return syntax("expected `:`");
      ++at_;
      skip_space();
      auto member = value(depth);
      if (!member || out_.done()) return member;
      members.emplace_back(std::move(*key), std::move(*member));
      skip_space();
      if (at_end()) return syntax("the document ends inside an object");
      if (peek() == '}') {
        ++at_;
        break;
      }
      if (peek() != ',') return syntax("expected `,` or `}`");
      ++at_;
    }
    return out_.object(std::move(members));
  }

  Result<Value> array(int depth) {
    if (depth > kMaxJsonDepth) return Error{"nesting deeper than 256 levels"};
    ++at_;  // [
    Value out = out_.array();
    skip_space();
    if (!at_end() && peek() == ']') {
      ++at_;
      return out;
    }
    while (true) {
      skip_space();
      auto item = value(depth);
      if (!item || out_.done()) return item;
      out_.push(out, std::move(*item));
      skip_space();
      if (at_end()) return syntax("the document ends inside an array");
      if (peek() == ']') {
        ++at_;
        return out;
      }
      if (peek() != ',') return syntax("expected `,` or `]`");
      ++at_;
    }
  }

  Result<std::uint32_t> hex4() {
    if (at_ + 4 > s_.size()) return syntax("a \\u escape is cut short");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[at_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        --at_;
        return syntax("a \\u escape needs four hex digits");
      }
    }
    return v;
  }

  // \uXXXX, with a surrogate pair for code points above U+FFFF; a lone surrogate is refused.
  Result<std::uint32_t> unicode_escape() {
    auto high = hex4();
    if (!high) return high;
    if (*high >= 0xdc00 && *high <= 0xdfff) return syntax("a lone low surrogate");
    if (*high < 0xd800 || *high > 0xdbff) return *high;
    if (s_.substr(at_, 2) != "\\u") return syntax("a high surrogate without its low half");
    at_ += 2;
    auto low = hex4();
    if (!low) return low;
    if (*low < 0xdc00 || *low > 0xdfff) return syntax("a high surrogate without its low half");
    return 0x10000 + ((*high - 0xd800) << 10) + (*low - 0xdc00);
  }

  Result<std::string> string() {
    ++at_;  // "
    std::string out;
    while (true) {
      if (at_end()) return syntax("the document ends inside a string");
      const auto c = static_cast<unsigned char>(peek());
      if (c == '"') {
        ++at_;
        return out;
      }
      if (c < 0x20) return syntax("a control character inside a string");
      if (c == '\\') {
        if (auto s = escape(out); !s) return s.error();
        continue;
      }
      if (c < 0x80) {
        const std::size_t end = plain_run_end();
        out.append(s_.substr(at_, end - at_));
        at_ = end;
        continue;
      }
      const auto cp = decode_utf8(s_, at_);
      if (!cp) return syntax("invalid UTF-8");
      out.append(s_.substr(at_, cp->length));
      at_ += cp->length;
    }
  }

  // Where the run of printable ASCII characters other than `"` and `\` that starts at at_ ends:
  // a string's content up to there is copied as it is.
  std::size_t plain_run_end() const {
    std::size_t end = at_;
    while (end < s_.size()) {
      const auto b = static_cast<unsigned char>(s_[end]);
      if (b < 0x20 || b >= 0x80 || b == '"' || b == '\\') break;
      ++end;
    }
    return end;
  }

  Status escape(std::string& out) {
    ++at_;  // backslash
    if (at_end()) return syntax("the document ends inside a string");
    const char c = s_[at_++];
    if (c == '/') {
      out.push_back(c);
      return {};
    }
    if (const auto e = kEscapeLetters.find(c); e != std::string_view::npos) {
      out.push_back(kEscapedChars[e]);
      return {};
    }
    if (c != 'u') {
      --at_;
      return syntax("an unknown escape");
    }
    auto cp = unicode_escape();
    if (!cp) return cp.error();
    append_utf8(out, *cp);
    return {};
  }

  std::size_t digits() {
    const std::size_t start = at_;
    while (!at_end() && peek() >= '0' && peek() <= '9') ++at_;
    return at_ - start;
  }

  // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
  Result<Value> number() {
    const std::size_t start = at_;
    const bool negative = !at_end() && peek() == '-';
    if (negative) ++at_;
    if (at_end() || peek() < '0' || peek() > '9') return syntax("unexpected character");
    if (peek() == '0') {
      ++at_;
    } else {
      digits();
    }
    bool plain = true;
    if (!at_end() && peek() == '.') {
      ++at_;
      if (digits() == 0) return syntax("a number needs digits after `.`");
      plain = false;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
      ++at_;
      if (!at_end() && (peek() == '+' || peek() == '-')) ++at_;
      if (digits() == 0) return syntax("a number needs digits in its exponent");
      plain = false;
    }
    return out_.number(s_.substr(start, at_ - start), plain);
  }

  std::string_view s_;
  std::size_t at_ = 0;
  Out& out_;
};

// Sorting pointers keeps this n log n where a search per insert would be quadratic.
template <class Value>
std::optional<std::string> first_duplicate(
    const std::vector<std::pair<std::string, Value>>& members) {
  std::vector<const std::string*> keys;
  keys.reserve(members.size());
  for (const auto& m : members) keys.push_back(&m.first);
  std::sort(keys.begin(), keys.end(), [](const auto* a, const auto* b) { return *a < *b; });
  const auto same = std::adjacent_find(keys.begin(), keys.end(),
                                       [](const auto* a, const auto* b) { return *a == *b; });
  if (same == keys.end()) return std::nullopt;
  return **same;
}

// The document itself.
struct JsonOut {
  using Value = Json;
  std::size_t values = 0;
  Status count_value() {
    if (++values > kMaxJsonValues)
      return Error{"more than " + std::to_string(kMaxJsonValues) + " values"};
    return {};
  }
  Json string(std::string&& text) { return Json(std::move(text)); }
  Json boolean(bool b) { return Json(b); }
  Json null() { return Json(nullptr); }
  Json array() { return Json::array(); }
  void push(Json& array, Json&& item) {
    array.get_ref<Json::array_t&>().push_back(std::move(item));
  }
  Result<Json> object(std::vector<std::pair<std::string, Json>>&& members) {
    return json_object(std::move(members));
  }
  // Plain integers that fit 64 bits become numbers, everything else a raw number.
  static constexpr bool done() { return false; }
  void key(std::string_view) {}
  Json number(std::string_view text, bool plain) {
    if (plain && text.front() != '-') {
      if (const auto v = parse_decimal(text)) return Json(*v);
    } else if (plain && text != "-0") {
      const auto magnitude = parse_decimal(text.substr(1));
      constexpr std::uint64_t kMinMagnitude = std::uint64_t{1} << 63;
      if (magnitude && *magnitude <= kMinMagnitude) {
        return Json(*magnitude == kMinMagnitude ? INT64_MIN
                                                : -static_cast<std::int64_t>(*magnitude));
      }
    }
    return raw_number(text);
  }
};

// No document: only whether a string, key or value, is one `wanted` asks for; done at the first.
struct StringScan {
  struct Value {};
  const std::function<bool(std::string_view)>& wanted;
  bool found = false;
  static Status count_value() { return {}; }
  bool done() const { return found; }
  void look(std::string_view text) { found = found || wanted(text); }
  void key(std::string_view text) { look(text); }
  Value string(std::string&& text) {
    look(text);
    return {};
  }
  Value boolean(bool) { return {}; }
  Value null() { return {}; }
  Value array() { return {}; }
  void push(Value&, Value&&) {}
  Result<Value> object(std::vector<std::pair<std::string, Value>>&& members) {
    if (auto duplicate = first_duplicate(members))
      return Error{"duplicate key " + quote(*duplicate, 128)};
    return Value{};
  }
  Value number(std::string_view, bool) { return {}; }
};

// What both readings refuse before the first value.
Status check_start(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") return Error{"starts with a UTF-8 byte-order mark"};
  if (trim(text).empty()) return Error{"is empty"};
  return {};
}

}  // namespace

Result<Json> json_object(std::vector<std::pair<std::string, Json>> members) {
  if (auto duplicate = first_duplicate(members))
    return Error{"duplicate key " + quote(*duplicate, 128)};
  // ordered_json's own insert searches every key; these are distinct, so they go straight
  // into its vector.
  Json out(Json::value_t::object);
  auto& entries =
      static_cast<std::vector<std::pair<const std::string, Json>>&>(out.get_ref<Json::object_t&>());
  entries.reserve(members.size());
  for (auto& [key, value] : members) entries.emplace_back(std::move(key), std::move(value));
  return out;
}

Json& object_slot(Json& object, const std::string& key) {
  if (object.is_null()) object = Json::object();
  auto& map = object.get_ref<Json::object_t&>();
  if (const auto found = map.find(key); found != map.end()) return found->second;
  using Members = std::vector<std::pair<const std::string, Json>>;
  auto& entries = static_cast<Members&>(map);
  if (entries.size() == entries.capacity()) {
    Members grown;
    grown.reserve(std::max<std::size_t>(4, entries.size() * 2));
    for (auto& [name, value] : entries) grown.emplace_back(name, std::move(value));
    entries.swap(grown);
  }
  return entries.emplace_back(key, Json()).second;
}

Result<Json> parse_json_strict(std::string_view text) {
  if (auto s = check_start(text); !s) return s.error();
  JsonOut out;
  return Reader<JsonOut>(text, out).document();
}

Result<bool> json_has_string(std::string_view text,
                             const std::function<bool(std::string_view)>& wanted) {
  if (auto s = check_start(text); !s) return s.error();
  StringScan scan{wanted};
  if (auto read = Reader<StringScan>(text, scan).document(); !read) return read.error();
  return scan.found;
}

Json raw_number(std::string_view text) {
  return Json::binary(Json::binary_t::container_type(text.begin(), text.end()), kRawNumberSubtype);
}

bool is_raw_number(const Json& value) {
  return value.is_binary() && value.get_binary().has_subtype() &&
         value.get_binary().subtype() == kRawNumberSubtype;
}

std::string raw_number_text(const Json& value) {
  const auto& bytes = value.get_binary();
  return std::string(bytes.begin(), bytes.end());
}

}  // namespace gcr
