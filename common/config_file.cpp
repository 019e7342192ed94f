#include "config_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "fs.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxConfigBytes = 1 << 20;

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
  return nullptr;  // dates and times: no key takes one, so they fail the type check
}

Result<Json> parse_toml(const std::string& text) {
  try {
    return toml_to_json(toml::parse(text));
  } catch (const toml::parse_error& e) {
    return Error{"invalid TOML at line " + std::to_string(e.source().begin.line) + ": " +
                 std::string(e.description())};
  }
}

Result<Json> parse_config_text(const std::string& path, const std::string& text) {
  if (path.ends_with(".toml")) return parse_toml(text);
  if (path.ends_with(".json")) {
    auto doc = parse_json_strict(text);
    if (!doc) return doc.error().wrap("invalid JSON");
    return doc;
  }
  return Error{"the file name must end in .toml or .json"};
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

Result<Config> load_config_file(const std::string& path) {
  const auto fail = [&](const Error& e) {
    return Error{"config: " + e.message + " (" + path + ")"};
  };
  auto text = read_regular_file(path, kMaxConfigBytes);
  if (!text) return fail(text.error());
  auto doc = parse_config_text(path, *text);
  if (!doc) return fail(doc.error());
  auto config = config_from_json(*doc);
  if (!config) return fail(config.error());
  config->source = path;
  return config;
}

Result<Config> load_config(const std::optional<std::string>& explicit_path,
                           const std::string& config_dir) {
  if (explicit_path) return load_config_file(*explicit_path);
  for (const char* name : {"/config.toml", "/config.json"}) {
    const std::string path = config_dir + name;
    if (exists(path)) return load_config_file(path);
  }
  return Config{};
}

std::optional<std::string> config_path_from_env() {
  const char* value = std::getenv(kConfigEnvVar);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace gcr
