// glibc's ld.so.cache, as the driver root may hold it (written by a driver container).
#include "ldcache/ldcache.h"
#include "fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)gcr::parse_ld_cache(gcr::fuzz::text_of(data, size));
  return 0;
}
