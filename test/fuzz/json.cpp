// The strict JSON reader and the writer: whatever is accepted is written back byte for byte
// when it was already in the writer's compact form, and always reads back to the same value.
#include "fuzz.h"
#include "json/strict_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = gcr::parse_json_strict(gcr::fuzz::text_of(data, size));
  if (!doc) return 0;
  const std::string text = gcr::json_text(*doc);
  auto again = gcr::parse_json_strict(text);
  gcr::fuzz::require(again.ok() && *again == *doc && gcr::json_text(*again) == text);
  const std::string pretty = gcr::json_text(*doc, 2);
  auto from_pretty = gcr::parse_json_strict(pretty);
  gcr::fuzz::require(from_pretty.ok() && *from_pretty == *doc);
  return 0;
}
