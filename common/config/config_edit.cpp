#include "config/config_edit.h"

#include <sstream>
#include <vector>

#include "base/text.h"
#include "toml/toml.h"

namespace gcr {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string key_line(const std::string& key, const Json& value) {
  return key + " = " + toml_value_text(value);
}

// The header line `[table]`, a comment after it allowed.
bool is_header_of(std::string_view line, const std::string& table) {
  line = trim(line);
  const std::string header = "[" + table + "]";
  if (!line.starts_with(header)) return false;
  const auto rest = trim(line.substr(header.size()));
  return rest.empty() || rest.starts_with("#");
}

bool is_any_header(std::string_view line) {
  return trim(line).starts_with("[");
}

// Whether `line` sets `key` (`key = ...`, `key=...`).
bool sets_key(std::string_view line, const std::string& key) {
  line = trim(line);
  if (!line.starts_with(key)) return false;
  return trim(line.substr(key.size())).starts_with("=");
}

void set_key(std::vector<std::string>& lines, const std::string& table, const std::string& key,
             const std::string& line) {
  std::size_t header = lines.size();
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (is_header_of(lines[i], table)) header = i;
  }
  if (header == lines.size()) {
    if (!lines.empty() && !trim(lines.back()).empty()) lines.emplace_back();
    lines.push_back("[" + table + "]");
    lines.push_back(line);
    return;
  }
  for (std::size_t i = header + 1; i < lines.size() && !is_any_header(lines[i]); ++i) {
    if (sets_key(lines[i], key)) {
      lines[i] = line;
      return;
    }
  }
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(header) + 1, line);
}

}  // namespace

Result<std::string> config_text_with_keys(const std::string& text, const Json& keys,
                                          const std::string& path) {
  auto before = parse_toml(text, path);
  if (!before) return before.error();
  Json meant = toml_to_json(*before);
  auto lines = lines_of(text);
  for (const auto& [table, members] : keys.items()) {
    if (meant.contains(table) && !meant[table].is_object())
      return Error{"cannot set " + table + " keys in " + path + ": `" + table + "` is not a table"};
    for (const auto& [key, value] : members.items()) {
      set_key(lines, table, key, key_line(key, value));
      meant[table][key] = value;
    }
  }
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  auto after = parse_toml(out, path);
  // Compared whatever the keys' order (a key put under its table's header comes first there).
  const auto unordered = [](const Json& j) { return nlohmann::json::parse(j.dump()); };
  if (!after || unordered(toml_to_json(*after)) != unordered(meant))
    return Error{"cannot set the keys in place in " + path +
                 ": a key there is written in a way line edits cannot see (across lines, "
                 "dotted or quoted); edit it by hand"};
  return out;
}

}  // namespace gcr
