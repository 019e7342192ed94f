// glibc's /etc/ld.so.cache: the new "glibc-ld.so.cache1.1" format (with or without the old
// "ld.so-1.7.0" section in front) read, and written as ldconfig writes it, in the loader's order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gcr {

enum class LibArch { k64, k32, kOther };

// ldconfig's flags for the libraries it indexes: an ELF library (no known libc among its
// needs), one that needs glibc, and the x86-64 mark.
inline constexpr std::int32_t kLdFlagElf = 0x0001;
inline constexpr std::int32_t kLdFlagElfLibc6 = 0x0003;
inline constexpr std::int32_t kLdFlagX8664Lib64 = 0x0300;

struct LdCacheEntry {
  std::string soname;  // the key, e.g. libcuda.so.1
  std::string path;    // the value, e.g. /usr/lib/x86_64-linux-gnu/libcuda.so.1
  LibArch arch;        // x86_64 (k64) or i386 (k32) glibc libraries; everything else kOther
  std::int32_t flags = 0;
  std::uint64_t hwcap = 0;      // non-zero for glibc-hwcaps and legacy hwcap entries
  std::uint32_t osversion = 0;  // unused by glibc 2.33 and later (written as 0)
};

struct LdCache {
  std::vector<LdCacheEntry> entries;  // in file order
  bool old_section = false;           // an "ld.so-1.7.0" section precedes the new one
};

// The architecture ldconfig's flags name.
[[nodiscard]] LibArch ld_cache_arch(std::int32_t flags);

// Entries in file order. Every offset is bounds-checked; a malformed file is an error.
[[nodiscard]] Result<std::vector<LdCacheEntry>> parse_ld_cache(std::string_view data);
[[nodiscard]] Result<LdCache> read_ld_cache(std::string_view data);

// The loader's comparison of two sonames: runs of digits compare as numbers, everything else
// byte by byte. Negative, zero or positive.
[[nodiscard]] int compare_sonames(std::string_view a, std::string_view b);

// Sorts entries as ldconfig does (sonames descending in the loader's comparison, then flags
// descending), keeping the given order among equals: the loader takes the first entry that
// fits, so earlier means preferred. Entries with a hwcap are not supported by this order.
void sort_ld_cache(std::vector<LdCacheEntry>& entries);

// The new-format file for `entries`, in the given order, with no extensions.
[[nodiscard]] std::string write_ld_cache(const std::vector<LdCacheEntry>& entries);

}  // namespace gcr
