#include "cdi/yaml.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <vector>

#include "base/text.h"
#include "base/utf8.h"

namespace gcr {
namespace {

constexpr int kMaxDepth = kMaxJsonDepth;

bool all_digits(const std::string& s, std::size_t from) {
  return from < s.size() && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from), s.end(),
                                        [](unsigned char c) { return std::isdigit(c) != 0; });
}

Json plain_scalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const std::size_t sign = s[0] == '-' || s[0] == '+' ? 1 : 0;
  // Integers as the CDI library's YAML reader (YAML 1.1) reads them: `0666` is octal, as a
  // fileMode is written, and 0x, 0o, 0b prefixes count.
  if (const auto v = parse_go_unsigned(std::string_view(s).substr(sign));
      v && sign < s.size() && std::isdigit(static_cast<unsigned char>(s[sign])) != 0) {
    if (s[0] != '-') return *v;
    if (*v <= static_cast<std::uint64_t>(INT64_MAX)) return -static_cast<long long>(*v);
  }
  if (all_digits(s, sign)) {
    errno = 0;
    if (s[0] == '-') {
      const long long v = std::strtoll(s.c_str(), nullptr, 10);
      if (errno == 0) return v;
    } else {
      const unsigned long long v = std::strtoull(s.c_str() + sign, nullptr, 10);
      if (errno == 0) return v;
    }
    return s;
  }
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (end != nullptr && *end == '\0' && s.find_first_of("0123456789") != std::string::npos &&
      s.find_first_of("xXpP") == std::string::npos) {
    return d;
  }
  return s;
}

// Builds the JSON document from the parser's events, with an explicit stack: aliases are
// refused (CDI specs have no use for them, and expanding them multiplies the work), so the work
// is linear in the text. Scalars must be valid UTF-8 without NUL, keys scalars and unique.
class JsonBuilder : public YAML::EventHandler {
 public:
  struct Refused {
    std::string why;
  };

  std::optional<Json> take() { return std::move(root_); }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { add(Json(nullptr), mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    refuse("aliases are not accepted", mark);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                const std::string& value) override {
    if (first_invalid_utf8(value)) refuse("invalid UTF-8 in a scalar", mark);
    if (value.find('\0') != std::string::npos) refuse("a NUL character in a scalar", mark);
    if (expecting_key()) {
      stack_.back().key = value;
      return;
    }
    add(tag == "!" ? Json(value) : plain_scalar(value), mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    open(false, mark);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    open(true, mark);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Frame {
    bool map;
    YAML::Mark mark;
    Json items = Json::array();
    std::vector<std::pair<std::string, Json>> members;
    std::optional<std::string> key;
  };

  [[noreturn]] static void refuse(const std::string& why, const YAML::Mark& mark) {
    throw Refused{why + " (line " + std::to_string(mark.line + 1) + ")"};
  }

  bool expecting_key() const { return !stack_.empty() && stack_.back().map && !stack_.back().key; }

  void open(bool map, const YAML::Mark& mark) {
    if (expecting_key()) refuse("a map key is not a scalar", mark);
    if (static_cast<int>(stack_.size()) >= kMaxDepth)
      refuse("nesting deeper than 256 levels", mark);
    stack_.push_back(Frame{map, mark, Json::array(), {}, std::nullopt});
  }

  void close() {
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    if (!frame.map) return add(std::move(frame.items), frame.mark);
    auto object = json_object(std::move(frame.members));
    if (!object) refuse(object.error().message, frame.mark);
    add(std::move(*object), frame.mark);
  }

  void add(Json value, const YAML::Mark& mark) {
    if (stack_.empty()) {
      root_ = std::move(value);
      return;
    }
    Frame& top = stack_.back();
    if (!top.map) {
      top.items.push_back(std::move(value));
      return;
    }
    if (!top.key) refuse("a map key is not a scalar", mark);
    top.members.emplace_back(std::move(*top.key), std::move(value));
    top.key.reset();
  }

  std::vector<Frame> stack_;
  std::optional<Json> root_;
};

void emit(YAML::Emitter& out, const Json& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (const auto& [key, value] : v.items()) {
      out << YAML::Key << key << YAML::Value;
      emit(out, value);
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    out << YAML::BeginSeq;
    for (const auto& item : v) emit(out, item);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (plain_scalar(s) == v) {
      out << s;
    } else {
      out << YAML::DoubleQuoted << s;
    }
  } else if (v.is_boolean()) {
    out << (v.get<bool>() ? "true" : "false");
  } else if (v.is_null()) {
    out << YAML::Null;
  } else {
    out << json_text(v);
  }
}

}  // namespace

std::string json_to_yaml(const Json& doc) {
  YAML::Emitter out;
  out << YAML::BeginDoc;
  emit(out, doc);
  return std::string(out.c_str()) + "\n";
}

Result<Json> yaml_to_json(const std::string& text) {
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    JsonBuilder builder;
    if (!parser.HandleNextDocument(builder)) return Json(nullptr);
    auto doc = builder.take();
    JsonBuilder rest;
    if (parser.HandleNextDocument(rest)) return Error{"more than one YAML document"};
    return doc ? std::move(*doc) : Json(nullptr);
  } catch (const JsonBuilder::Refused& r) {
    return Error{r.why};
  } catch (const YAML::Exception& e) {
    return Error{"invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
}

}  // namespace gcr
