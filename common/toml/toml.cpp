#include "toml/toml.h"

namespace gcr {

Result<toml::table> parse_toml(std::string_view text, const std::string& source) {
  try {
    return toml::parse(text, source);
  } catch (const toml::parse_error& e) {
    return Error{"invalid TOML at line " + std::to_string(e.source().begin.line) + ": " +
                 std::string(e.description())};
  }
}

Json toml_to_json(const toml::node& node) {
  if (const auto* table = node.as_table()) {
    Json out = Json::object();
    for (const auto& [key, value] : *table) out[std::string(key.str())] = toml_to_json(value);
    return out;
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
