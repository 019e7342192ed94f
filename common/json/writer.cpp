// json_text(): the writer. Its layout is nlohmann's dump() so documents look as they always
// did; what it adds is raw numbers written back as read, and no exception on bad UTF-8.
#include <string>

#include "base/utf8.h"
#include "json/strict_json.h"

namespace gcr {
namespace {

// Printable ASCII written as it is: no quote, backslash or control character, no byte of a
// multi-byte character.
bool is_plain(unsigned char c) {
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

void append_string(std::string& out, const std::string& s) {
  static const char* hex = "0123456789abcdef";
  out.push_back('"');
  std::size_t at = 0;
  while (at < s.size()) {
    // Plain text is copied in runs, not byte by byte.
    std::size_t end = at;
    while (end < s.size() && is_plain(static_cast<unsigned char>(s[end]))) ++end;
    out.append(s, at, end - at);
    at = end;
    if (at == s.size()) break;
    const auto c = static_cast<unsigned char>(s[at]);
    if (c >= 0x80) {
      const auto cp = decode_utf8(s, at);
      if (cp) {
        out.append(s, at, cp->length);
        at += cp->length;
      } else {
        out.append("\xEF\xBF\xBD");  // U+FFFD
        ++at;
      }
      continue;
    }
    ++at;
    if (const auto e = kEscapedChars.find(static_cast<char>(c)); e != std::string_view::npos) {
      out.push_back('\\');
      out.push_back(kEscapeLetters[e]);
    } else if (c < 0x20) {
      out.append("\\u00");
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 0xf]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

class Writer {
 public:
  Writer(int indent, std::size_t capacity) : indent_(indent) { out_.reserve(capacity); }

  void write(const Json& v, int level) {
    switch (v.type()) {
      case Json::value_t::object:
        return write_object(v, level);
      case Json::value_t::array:
        return write_array(v, level);
      case Json::value_t::string:
        return append_string(out_, v.get_ref<const std::string&>());
      case Json::value_t::binary:  // only the reader makes these: raw numbers
        out_ += is_raw_number(v) ? raw_number_text(v) : "null";
        return;
      case Json::value_t::number_integer:
        out_ += std::to_string(v.get<std::int64_t>());
        return;
      case Json::value_t::number_unsigned:
        out_ += std::to_string(v.get<std::uint64_t>());
        return;
      case Json::value_t::number_float:
        out_ += v.dump();  // nlohmann's shortest round-trip form
        return;
      case Json::value_t::boolean:
        out_ += v.get<bool>() ? "true" : "false";
        return;
      case Json::value_t::null:
      case Json::value_t::discarded:
        out_ += "null";
        return;
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int level) {
    if (indent_ < 0) return;
    out_.push_back('\n');
    out_.append(static_cast<std::size_t>(indent_ * level), ' ');
  }

  void write_object(const Json& v, int level) {
    if (v.empty()) {
      out_ += "{}";
      return;
    }
    out_.push_back('{');
    bool first = true;
    for (const auto& [key, value] : v.items()) {
      if (!first) out_.push_back(',');
      first = false;
      newline(level + 1);
      append_string(out_, key);
      out_ += indent_ < 0 ? ":" : ": ";
      write(value, level + 1);
    }
    newline(level);
    out_.push_back('}');
  }

  void write_array(const Json& v, int level) {
    if (v.empty()) {
      out_ += "[]";
      return;
    }
    out_.push_back('[');
    bool first = true;
    for (const auto& item : v) {
      if (!first) out_.push_back(',');
      first = false;
      newline(level + 1);
      write(item, level + 1);
    }
    newline(level);
    out_.push_back(']');
  }

  int indent_;
  std::string out_;
};

}  // namespace

std::string json_text(const Json& value, int indent, std::size_t capacity) {
  Writer writer(indent, capacity);
  writer.write(value, 0);
  return writer.take();
}

}  // namespace gcr
