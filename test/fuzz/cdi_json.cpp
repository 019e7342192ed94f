// A CDI spec file in JSON: the model, validation, the minimum version, and back to JSON: a
// valid spec written out reads back as the same spec.
#include "cdi/spec.h"
#include "fuzz.h"
#include "json/strict_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = gcr::parse_json_strict(gcr::fuzz::text_of(data, size));
  if (!doc) return 0;
  auto spec = gcr::cdi_spec_from_json(*doc);
  if (!spec) return 0;
  if (!gcr::validate_cdi_spec(*spec)) return 0;
  (void)gcr::minimum_cdi_version(*spec);
  const gcr::Json out = gcr::cdi_spec_to_json(*spec);
  auto back = gcr::cdi_spec_from_json(out);
  gcr::fuzz::require(back.ok() && gcr::cdi_spec_to_json(*back) == out);
  return 0;
}
