// glibc's /etc/ld.so.cache: the new "glibc-ld.so.cache1.1" format (with or without the old
// "ld.so-1.7.0" section in front) read, and written as ldconfig writes it, in the loader's order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "ldcache/image_budget.h"

namespace gcr {

enum class LibArch { k64, k32, kOther };

// ldconfig's flags for the libraries it indexes: an ELF library (no known libc among its
// needs), one that needs glibc, and the x86-64 mark.
inline constexpr std::int32_t kLdFlagElf = 0x0001;
inline constexpr std::int32_t kLdFlagElfLibc6 = 0x0003;
inline constexpr std::int32_t kLdFlagX8664Lib64 = 0x0300;

// An entry whose names are views of the cache read (or of strings its user keeps).
struct LdCacheRef {
  std::string_view soname;  // the key, e.g. libcuda.so.1
  std::string_view path;    // the value, e.g. /usr/lib/x86_64-linux-gnu/libcuda.so.1
  LibArch arch;             // x86_64 (k64) or i386 (k32) glibc libraries; everything else kOther
  std::int32_t flags = 0;
  std::uint64_t hwcap = 0;      // non-zero for glibc-hwcaps and legacy hwcap entries
  std::uint32_t osversion = 0;  // unused by glibc 2.33 and later (written as 0)
};

// The same, owning its names, for callers that keep entries past the file.
struct LdCacheEntry {
  std::string soname;
  std::string path;
  LibArch arch;
  std::int32_t flags = 0;
  std::uint64_t hwcap = 0;
  std::uint32_t osversion = 0;
};

struct LdCache {
  std::vector<LdCacheRef> entries;  // in file order, views of the data read
  bool old_section = false;         // an "ld.so-1.7.0" section precedes the new one
};

// The architecture ldconfig's flags name.
[[nodiscard]] LibArch ld_cache_arch(std::int32_t flags);

// The entries of the cache `data` (the file `file`), in file order. The count and every offset
// are checked before anything is allocated; no key or value may reach PATH_MAX, and the entries
// are charged to `budget` (their number, and the bytes of the names they give, counted as
// often as they are given): a malformed or over-budget file is an error.
[[nodiscard]] Result<LdCache> read_ld_cache(std::string_view data, ImageBudget& budget,
                                            std::string_view file);
// The same, copied, within a budget of its own.
[[nodiscard]] Result<std::vector<LdCacheEntry>> parse_ld_cache(std::string_view data);

// A strict weak order of sonames that is the loader's wherever the loader's own comparison is
// consistent: runs of digits compare as numbers (of any length), everything else byte by byte
// as signed char. Negative, zero or positive.
[[nodiscard]] int compare_sonames(std::string_view a, std::string_view b);

// Whether the loader compares `soname` consistently: its comparison adds up each digit run in
// a 32-bit int that wraps, so a run above INT_MAX (ten 7s) makes its order inconsistent, and a
// cache holding such a name is one only ldconfig writes as the loader will search it.
[[nodiscard]] bool loader_orders(std::string_view soname);

// Sorts entries as ldconfig does (sonames descending in compare_sonames, then flags
// descending), keeping the given order among equals: the loader takes the first entry that
// fits, so earlier means preferred. Entries with a hwcap are not supported by this order.
void sort_ld_cache(std::vector<LdCacheRef>& entries);

// The new-format file for `entries`, in the given order, with no extensions.
[[nodiscard]] std::string write_ld_cache(const std::vector<LdCacheRef>& entries);

}  // namespace gcr
