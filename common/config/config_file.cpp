#include "config/config_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "base/fs.h"
#include "base/trust.h"
#include "toml/toml.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxConfigBytes = 1 << 20;

Result<Json> parse_toml_config(const std::string& text, const std::string& path) {
  auto table = parse_toml(text, path);
  if (!table) return table.error();
  return toml_to_json(*table);
}

Result<Json> parse_config_text(const std::string& path, const std::string& text) {
  if (path.ends_with(".toml")) return parse_toml_config(text, path);
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
  struct stat st {};
  // The configuration decides what runs as root: as root, only root may write it or replace it
  // on its way (every directory and symlink of the path, as for the programs we run); else root
  // or whoever runs us may write the file.
  const bool root = ::geteuid() == 0;
  if (root) {
    if (auto s = TrustCheck().file(path, st); !s)
      return Error{"config: refused: " + s.error().message};
  }
  auto text = read_regular_file(path, kMaxConfigBytes, st);
  if (!text) return fail(text.error());
  if (!root) {
    if (auto s = owned_by_root_only(st, ::geteuid()); !s) return fail(s.error().wrap("refused"));
  }
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
