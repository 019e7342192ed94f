// Our configuration file, TOML (with the checks that keep toml++ safe) and JSON.
#include "config/config.h"
#include "fuzz.h"
#include "json/strict_json.h"
#include "toml/toml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = gcr::fuzz::text_of(data, size);
  if (auto table = gcr::parse_toml(text, "fuzz.toml")) {
    (void)gcr::config_from_json(gcr::toml_to_json(*table));
  }
  if (auto doc = gcr::parse_json_strict(text)) (void)gcr::config_from_json(*doc);
  return 0;
}
