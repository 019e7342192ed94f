// The strict JSON reader and the writer: whatever is accepted is written back byte for byte
// when it was already in the writer's compact form, and always reads back to the same value.
// The scan without a document refuses what the reader refuses with the same errors (up to the
// first string it wants, where it stops), and finds a string exactly when the document has one.
#include <string_view>

#include "fuzz.h"
#include "json/strict_json.h"

namespace {

bool wanted(std::string_view s) {
  return s.find('A') != std::string_view::npos;
}

bool document_has(const gcr::Json& value) {
  if (value.is_string()) return wanted(value.get_ref<const std::string&>());
  if (value.is_array()) {
    for (const auto& item : value)
      if (document_has(item)) return true;
  }
  if (value.is_object()) {
    for (const auto& [key, item] : value.items())
      if (wanted(key) || document_has(item)) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = gcr::fuzz::text_of(data, size);
  auto doc = gcr::parse_json_strict(input);
  auto scanned = gcr::json_has_string(input, wanted);
  // The scan refuses what the reader refuses, with its words, up to the first string it wants.
  if (!scanned) gcr::fuzz::require(!doc && scanned.error().message == doc.error().message);
  if (!doc) {
    gcr::fuzz::require(!scanned || *scanned);
    return 0;
  }
  gcr::fuzz::require(scanned.ok() && *scanned == document_has(*doc));
  const std::string text = gcr::json_text(*doc);
  auto again = gcr::parse_json_strict(text);
  gcr::fuzz::require(again.ok() && *again == *doc && gcr::json_text(*again) == text);
  const std::string pretty = gcr::json_text(*doc, 2);
  auto from_pretty = gcr::parse_json_strict(pretty);
  gcr::fuzz::require(from_pretty.ok() && *from_pretty == *doc);
  return 0;
}
