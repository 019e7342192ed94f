// A CDI spec file in YAML: the event reader (no aliases, bounded depth, valid UTF-8), then the
// model; what it accepts can be written as JSON.
#include "cdi/spec.h"
#include "cdi/yaml.h"
#include "fuzz.h"
#include "json/strict_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = gcr::yaml_to_json(std::string(gcr::fuzz::text_of(data, size)));
  if (!doc) return 0;
  auto text = gcr::json_text(*doc);
  gcr::fuzz::require(gcr::parse_json_strict(text).ok() || doc->is_null() || doc->is_string() ||
                     doc->is_number() || doc->is_boolean());
  auto spec = gcr::cdi_spec_from_json(*doc);
  if (spec) (void)gcr::validate_cdi_spec(*spec);
  return 0;
}
