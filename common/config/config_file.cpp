#include "config/config_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include "base/fs.h"
#include "base/text.h"
#include "base/trust.h"
#include "json/strict_json.h"
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
  if (path.ends_with(".toml")) {
    if (auto simple = simple_config_toml(text)) return std::move(*simple);
    return parse_toml_config(text, path);
  }
  if (path.ends_with(".json")) {
    auto doc = parse_json_strict(text);
    if (!doc) return doc.error().wrap("invalid JSON");
    return doc;
  }
  return Error{"the file name must end in .toml or .json"};
}

// "[name]" or "[a.b]" (bare keys), perhaps with a comment after: the name, else nullopt.
std::optional<std::string_view> table_header(std::string_view line) {
  if (!line.starts_with('[')) return std::nullopt;
  const auto close = line.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  const std::string_view rest = trim(line.substr(close + 1));
  if (!rest.empty() && !rest.starts_with('#')) return std::nullopt;
  const std::string_view name = trim(line.substr(1, close - 1));
  if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                             "0123456789_-.") != std::string_view::npos)
    return std::nullopt;
  return name;
}

// Blanks (spaces, tabs) off the front of `s`.
std::string_view skip_blanks(std::string_view s) {
  return s.substr(std::min(s.find_first_not_of(" \t"), s.size()));
}

// The text of a basic string without escapes at the front of `s`, which moves past it.
std::optional<std::string> plain_string(std::string_view& s) {
  if (!s.starts_with('"')) return std::nullopt;
  const auto close = s.find('"', 1);
  if (close == std::string_view::npos) return std::nullopt;
  const std::string_view text = s.substr(1, close - 1);
  if (text.find('\\') != std::string_view::npos) return std::nullopt;
  s.remove_prefix(close + 1);
  return std::string(text);
}

// A plain string or a one-line array of them (a comma after the last allowed), `true` or
// `false`, a decimal integer of at most 18 digits, or `{}`, at the front of `s`, which moves
// past it.
std::optional<Json> simple_value(std::string_view& s) {
  for (const bool value : {true, false}) {
    const std::string_view word = value ? "true" : "false";
    if (s.starts_with(word)) {
      s.remove_prefix(word.size());
      return Json(value);
    }
  }
  if (s.starts_with('{')) {
    s = skip_blanks(s.substr(1));
    if (!s.starts_with('}')) return std::nullopt;
    s.remove_prefix(1);
    return Json::object();
  }
  const bool negative = s.starts_with('-');
  const std::string_view digits = s.substr(negative ? 1 : 0);
  const std::size_t n = std::min(digits.find_first_not_of("0123456789"), digits.size());
  if (n > 0) {
    if (n > 18 || (n > 1 && digits.front() == '0')) return std::nullopt;
    std::int64_t magnitude = 0;
    for (char c : digits.substr(0, n)) magnitude = magnitude * 10 + (c - '0');
    s.remove_prefix((negative ? 1 : 0) + n);
    return Json(negative ? -magnitude : magnitude);
  }
  if (!s.starts_with('[')) {
    auto text = plain_string(s);
    return text ? std::optional<Json>(std::move(*text)) : std::nullopt;
  }
  Json array = Json::array();
  for (s = skip_blanks(s.substr(1)); !s.starts_with(']'); s = skip_blanks(s)) {
    auto text = plain_string(s);
    if (!text) return std::nullopt;
    array.push_back(std::move(*text));
    s = skip_blanks(s);
    if (s.starts_with(',')) {
      s.remove_prefix(1);
    } else if (!s.starts_with(']')) {
      return std::nullopt;
    }
  }
  s.remove_prefix(1);
  return array;
}

bool is_printable_ascii_text(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return c == '\t' || c == '\n' || (c >= 0x20 && c < 0x7f); });
}

Result<Json> parse_runtime_table(const std::string& table, const std::string& path) {
  if (auto simple = simple_config_toml(table)) return std::move(*simple);
  return parse_toml_config(table, path);
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

std::optional<std::string> requests_mode_of_program(const std::string& program) {
  const std::string name = basename_of(program);
  if (name == "nvidia-container-runtime.cdi") return "cdi";
  if (name == "nvidia-container-runtime.legacy") return "auto";
  return std::nullopt;
}

std::optional<std::string> runtime_table_text(std::string_view text) {
  if (text.find("\"\"\"") != std::string_view::npos || text.find("'''") != std::string_view::npos)
    return std::nullopt;
  std::string table;
  bool in_runtime = false;
  bool seen_runtime = false;
  bool seen_header = false;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const std::string_view content = trim(line);
    if (content.empty() || content.starts_with('#')) {
      if (in_runtime) table.append(line).push_back('\n');
      continue;
    }
    if (content.starts_with('[')) {
      // Not a plain header: a quoted name, an array of tables, most lines of an array. A line
      // of an array that looks like one (`[1]`) cuts the table short: it is no TOML then.
      const auto name = table_header(content);
      if (!name || name->starts_with("runtime.")) return std::nullopt;
      seen_header = true;
      in_runtime = name == "runtime";
      if (in_runtime && seen_runtime) return std::nullopt;
      seen_runtime = seen_runtime || in_runtime;
    } else if (!seen_header) {
      return std::nullopt;  // a key of the root table, perhaps a dotted runtime.x
    }
    if (in_runtime) table.append(line).push_back('\n');
  }
  return table;
}

std::optional<Json> simple_config_toml(std::string_view text) {
  if (!is_printable_ascii_text(text)) return std::nullopt;
  // A TOML table's keys come out in this order; so do the tables.
  std::map<std::string, std::map<std::string, Json>> tables;
  std::map<std::string, Json>* table = nullptr;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view rest = skip_blanks(text.substr(start, end - start));
    start = end + 1;
    if (rest.empty() || rest.starts_with('#')) continue;
    // A bare key or table name, from `from`: its end.
    const auto bare_end = [&rest](std::size_t from) {
      return std::min(rest.find_first_not_of(
                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", from),
                      rest.size());
    };
    if (rest.starts_with('[')) {
      const std::size_t name_end = bare_end(1);
      const std::string name(rest.substr(1, name_end - 1));
      rest = rest.substr(name_end);
      if (name.empty() || !rest.starts_with(']')) return std::nullopt;
      rest.remove_prefix(1);
      auto [at, fresh] = tables.try_emplace(name);
      if (!fresh) return std::nullopt;
      table = &at->second;
    } else {
      const std::size_t key_end = bare_end(0);
      const std::string key(rest.substr(0, key_end));
      rest = skip_blanks(rest.substr(key_end));
      if (table == nullptr || key.empty() || !rest.starts_with('=')) return std::nullopt;
      rest = skip_blanks(rest.substr(1));
      auto value = simple_value(rest);
      if (!value || !table->emplace(key, std::move(*value)).second) return std::nullopt;
    }
    rest = skip_blanks(rest);
    if (!rest.empty() && !rest.starts_with('#')) return std::nullopt;
  }
  // Built from whole member lists: ordered_json's own inserts copy every earlier member.
  std::vector<std::pair<std::string, Json>> members;
  members.reserve(tables.size());
  for (auto& [name, keys] : tables) {
    std::vector<std::pair<std::string, Json>> entries;
    entries.reserve(keys.size());
    for (auto& [key, value] : keys) entries.emplace_back(key, std::move(value));
    members.emplace_back(name, json_object(std::move(entries)).value());
  }
  return json_object(std::move(members)).value();
}

namespace {

// The file's text, once the file may be trusted: the configuration decides what runs as root,
// so as root only root may write it or replace it on its way (every directory and symlink of
// the path, as for the programs we run); else root or whoever runs us may write the file.
Result<std::string> read_trusted_config(const std::string& path) {
  const auto fail = [&](const Error& e) {
    return Error{"config: " + e.message + " (" + path + ")"};
  };
  struct stat st {};
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
  return text;
}

// The [runtime] table alone of a TOML file whose lines tell it apart, else the whole file: a
// table that is not TOML by itself (a line of an array taken for a header cut it short) is read
// again with the whole file; its checks are its own.
Result<Json> parse_runtime_part(const std::string& path, const std::string& text) {
  const auto table = path.ends_with(".toml") ? runtime_table_text(text) : std::nullopt;
  auto doc = table ? parse_runtime_table(*table, path) : parse_config_text(path, text);
  if (!doc && table) doc = parse_config_text(path, text);
  return doc;
}

}  // namespace

Result<Config> load_config_file(const std::string& path, ConfigScope scope) {
  const auto fail = [&](const Error& e) {
    return Error{"config: " + e.message + " (" + path + ")"};
  };
  auto text = read_trusted_config(path);
  if (!text) return text.error();
  auto doc = scope == ConfigScope::kRuntimeTable ? parse_runtime_part(path, *text)
                                                 : parse_config_text(path, *text);
  if (!doc) return fail(doc.error());
  auto config = config_from_json(*doc);
  if (!config) return fail(config.error());
  config->source = path;
  return config;
}

std::optional<std::string> config_file_in_effect(const std::optional<std::string>& explicit_path,
                                                 const std::string& config_dir) {
  if (explicit_path) return explicit_path;
  for (const char* name : {"/config.toml", "/config.json"}) {
    const std::string path = config_dir + name;
    if (exists(path)) return path;
  }
  return std::nullopt;
}

Result<Config> load_config(const std::optional<std::string>& explicit_path,
                           const std::string& config_dir, ConfigScope scope) {
  const auto path = config_file_in_effect(explicit_path, config_dir);
  return path ? load_config_file(*path, scope) : Result<Config>(Config{});
}

std::optional<std::vector<std::string>> runtimes_of_failed_config(const std::string& path) {
  auto text = read_trusted_config(path);
  if (!text) return std::nullopt;
  // As a pass-through call reads it: a mistake elsewhere, a TOML one too, keeps the list.
  auto doc = parse_runtime_part(path, *text);
  if (!doc || !doc->is_object()) return std::nullopt;
  const auto runtime = doc->find("runtime");
  if (runtime == doc->end() || !runtime->is_object() || !runtime->contains("runtimes"))
    return std::nullopt;
  auto alone = config_from_json(Json{{"runtime", {{"runtimes", runtime->at("runtimes")}}}});
  if (!alone) return std::nullopt;
  return alone->runtime.runtimes;
}

std::optional<std::string> config_path_from_env() {
  const char* value = std::getenv(kConfigEnvVar);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

}  // namespace gcr
