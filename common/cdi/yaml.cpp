#include "cdi/yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace gcr {
namespace {

constexpr int kMaxDepth = kMaxJsonDepth;
constexpr std::size_t kMaxNodes =
    1u << 20;  // aliases can multiply a small file; this bounds the result

struct Budget {
  std::size_t nodes = 0;
};

bool all_digits(const std::string& s, std::size_t from) {
  return from < s.size() && std::all_of(s.begin() + static_cast<std::ptrdiff_t>(from), s.end(),
                                        [](unsigned char c) { return std::isdigit(c) != 0; });
}

Json plain_scalar(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const std::size_t sign = s[0] == '-' || s[0] == '+' ? 1 : 0;
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

Result<Json> convert(const YAML::Node& node, int depth, Budget& budget) {
  if (depth > kMaxDepth) return Error{"nesting deeper than 256 levels"};
  if (++budget.nodes > kMaxNodes) return Error{"more than a million nodes (alias expansion?)"};
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return Json(nullptr);
    case YAML::NodeType::Scalar:
      return node.Tag() == "!" ? Json(node.Scalar()) : plain_scalar(node.Scalar());
    case YAML::NodeType::Sequence: {
      Json out = Json::array();
      for (const auto& item : node) {
        auto v = convert(item, depth + 1, budget);
        if (!v) return v;
        out.push_back(std::move(*v));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      Json out = Json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar())
          return Error{"a map key is not a scalar (line " +
                       std::to_string(kv.first.Mark().line + 1) + ")"};
        const std::string key = kv.first.Scalar();
        if (out.contains(key))
          return Error{"duplicate key `" + key + "` (line " +
                       std::to_string(kv.first.Mark().line + 1) + ")"};
        auto v = convert(kv.second, depth + 1, budget);
        if (!v) return v;
        out[key] = std::move(*v);
      }
      return out;
    }
  }
  return Json(nullptr);
}

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
    const YAML::Node root = YAML::Load(text);
    Budget budget;
    return convert(root, 0, budget);
  } catch (const YAML::Exception& e) {
    return Error{"invalid YAML at line " + std::to_string(e.mark.line + 1) + ": " + e.msg};
  }
}

}  // namespace gcr
