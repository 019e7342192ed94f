// Our configuration file, TOML (with the checks that keep toml++ safe) and JSON, the [runtime]
// table a pass-through call reads alone, and a file of the usual forms read without the TOML
// parser.
#include "config/config.h"
#include "config/config_file.h"
#include "fuzz.h"
#include "json/strict_json.h"
#include "toml/toml.h"

namespace {

std::optional<gcr::Config> config_of_toml(std::string_view text) {
  auto table = gcr::parse_toml(text, "fuzz.toml");
  if (!table) return std::nullopt;
  auto config = gcr::config_from_json(gcr::toml_to_json(*table));
  if (!config) return std::nullopt;
  return *config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = gcr::fuzz::text_of(data, size);
  const auto whole = config_of_toml(text);
  // A pass-through call's [runtime] alone: wherever it is told apart, a valid file's runtime
  // settings are the same read alone as read whole.
  if (const auto table = gcr::runtime_table_text(text); table && whole) {
    const auto alone = config_of_toml(*table);
    gcr::fuzz::require(alone.has_value());
    gcr::fuzz::require(alone->runtime.runtimes == whole->runtime.runtimes &&
                       alone->runtime.log_file == whole->runtime.log_file &&
                       alone->runtime.log_level == whole->runtime.log_level &&
                       alone->runtime.state_dir == whole->runtime.state_dir);
  }
  // A file read without the TOML parser reads as the parser reads it.
  if (const auto simple = gcr::simple_config_toml(text)) {
    const auto table = gcr::parse_toml(text, "fuzz.toml");
    gcr::fuzz::require(table.ok() && gcr::toml_to_json(*table) == *simple);
  }
  if (auto doc = gcr::parse_json_strict(text)) (void)gcr::config_from_json(*doc);
  return 0;
}
