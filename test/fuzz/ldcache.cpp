// glibc's ld.so.cache, as the driver root or an image may hold it: read within the image budget
// (inputs up to the cache's own 16 MiB), sorted, and what reads back from the file written for
// the entries read. The sort's order must be consistent for every input, and the loader's own
// wherever the loader can order the names.
#include <cstdint>

#include "fuzz.h"
#include "ldcache/ldcache.h"

namespace {

int sign(int v) {
  return (v > 0) - (v < 0);
}

// The loader's comparison as it runs: digit runs summed in 32 bits that wrap.
int loader_compare(std::string_view a, std::string_view b) {
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const auto at = [](std::string_view s, std::size_t i) { return i < s.size() ? s[i] : '\0'; };
  std::size_t i = 0;
  std::size_t j = 0;
  while (at(a, i) != '\0') {
    if (digit(at(a, i)) && digit(at(b, j))) {
      std::uint32_t x = 0;
      std::uint32_t y = 0;
      while (digit(at(a, i))) x = x * 10 + static_cast<std::uint32_t>(a[i++] - '0');
      while (digit(at(b, j))) y = y * 10 + static_cast<std::uint32_t>(b[j++] - '0');
      const auto diff = static_cast<std::int32_t>(x - y);
      if (diff != 0) return diff;
    } else if (digit(at(a, i))) {
      return 1;
    } else if (digit(at(b, j))) {
      return -1;
    } else if (at(a, i) != at(b, j)) {
      return static_cast<signed char>(at(a, i)) - static_cast<signed char>(at(b, j));
    } else {
      ++i;
      ++j;
    }
  }
  return -static_cast<signed char>(at(b, j));
}

void check_neighbours(const gcr::LdCacheRef& before, const gcr::LdCacheRef& after) {
  const int order = gcr::compare_sonames(before.soname, after.soname);
  gcr::fuzz::require(order >= 0);
  gcr::fuzz::require(sign(gcr::compare_sonames(after.soname, before.soname)) == -sign(order));
  if (gcr::loader_orders(before.soname) && gcr::loader_orders(after.soname))
    gcr::fuzz::require(sign(loader_compare(before.soname, after.soname)) == sign(order));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gcr::ImageBudget budget;
  auto cache = gcr::read_ld_cache(gcr::fuzz::text_of(data, size), budget, "ld.so.cache");
  if (!cache) return 0;
  auto& entries = cache->entries;
  gcr::sort_ld_cache(entries);
  const std::string written = gcr::write_ld_cache(entries);
  gcr::ImageBudget again_budget;
  const auto again = gcr::read_ld_cache(written, again_budget, "ld.so.cache");
  gcr::fuzz::require(again && again->entries.size() == entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& a = entries[i];
    const auto& b = again->entries[i];
    gcr::fuzz::require(a.soname == b.soname && a.path == b.path && a.flags == b.flags &&
                       a.hwcap == b.hwcap);
    if (i > 0) check_neighbours(entries[i - 1], a);
  }
  return 0;
}
