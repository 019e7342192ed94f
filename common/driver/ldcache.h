// Parser for glibc's /etc/ld.so.cache (new "glibc-ld.so.cache1.1" format, with or without
// the old "ld.so-1.7.0" section in front).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gcr {

enum class LibArch { k64, k32, kOther };

struct LdCacheEntry {
  std::string soname;  // the key, e.g. libcuda.so.1
  std::string path;    // the value, e.g. /usr/lib/x86_64-linux-gnu/libcuda.so.1
  LibArch arch;        // x86_64 (k64) or i386 (k32) glibc libraries; everything else kOther
};

// Entries in file order. Every offset is bounds-checked; a malformed file is an error.
[[nodiscard]] Result<std::vector<LdCacheEntry>> parse_ld_cache(std::string_view data);

}  // namespace gcr
