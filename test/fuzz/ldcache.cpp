// glibc's ld.so.cache, as the driver root or an image may hold it: read, and what reads back
// from the file written for the entries read (the hooks write the image's entries again).
#include <cstdlib>

#include "fuzz.h"
#include "ldcache/ldcache.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto entries = gcr::parse_ld_cache(gcr::fuzz::text_of(data, size));
  if (!entries) return 0;
  gcr::sort_ld_cache(*entries);
  auto again = gcr::parse_ld_cache(gcr::write_ld_cache(*entries));
  if (!again || again->size() != entries->size()) std::abort();
  for (std::size_t i = 0; i < entries->size(); ++i) {
    const auto& a = (*entries)[i];
    const auto& b = (*again)[i];
    if (a.soname != b.soname || a.path != b.path || a.flags != b.flags || a.hwcap != b.hwcap)
      std::abort();
    if (i > 0 && gcr::compare_sonames((*entries)[i - 1].soname, a.soname) < 0) std::abort();
  }
  return 0;
}
