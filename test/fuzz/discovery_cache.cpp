// The discovery cache's file (a root-owned 0600 file, but read as any other input): the whole
// file with its stamps, and the driver file set it keeps. Whatever reads back writes out again
// as something that reads back the same, so nothing is lost or invented between two creates.
#include "discovery_cache/driver_files_cache.h"
#include "discovery_cache/fields.h"
#include "discovery_cache/stamped_file.h"
#include "fuzz.h"

namespace {

bool same_stamps(const gcr::Stamped& a, const gcr::Stamped& b) {
  if (a.payload != b.payload || a.stamps.size() != b.stamps.size() ||
      a.read_only.size() != b.read_only.size())
    return false;
  for (std::size_t i = 0; i < a.stamps.size(); ++i) {
    if (!a.stamps[i].holds(b.stamps[i]) || a.stamps[i].whole != b.stamps[i].whole) return false;
  }
  for (std::size_t i = 0; i < a.read_only.size(); ++i) {
    if (a.read_only[i].path != b.read_only[i].path ||
        a.read_only[i].read_only != b.read_only[i].read_only)
      return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = gcr::fuzz::text_of(data, size);
  // The key asked for is the file's own (its first field), so that inputs reach the stamps.
  constexpr std::string_view kMagic = "gcr-discovery-cache 2\n";
  std::string key;
  if (text.starts_with(kMagic)) (void)gcr::FieldReader(text.substr(kMagic.size())).text(key);
  if (const auto stamped = gcr::read_stamped(text, key)) {
    const auto again = gcr::read_stamped(gcr::write_stamped(key, *stamped), key);
    gcr::fuzz::require(again && same_stamps(*stamped, *again));
  }
  const std::string payload(text);
  if (const auto set = gcr::decode_file_set(payload)) {
    const auto again = gcr::decode_file_set(gcr::encode_file_set(set->set, set->notes));
    gcr::fuzz::require(again && again->notes == set->notes &&
                       again->set.libraries.size() == set->set.libraries.size() &&
                       gcr::encode_file_set(again->set, again->notes) ==
                           gcr::encode_file_set(set->set, set->notes));
  }
  return 0;
}
