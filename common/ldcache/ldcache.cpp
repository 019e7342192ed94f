#include "ldcache/ldcache.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gcr {
namespace {

constexpr std::string_view kOldMagic = "ld.so-1.7.0";
constexpr std::string_view kNewMagic = "glibc-ld.so.cache1.1";
constexpr std::size_t kOldHeader = 16;  // magic (12 incl. NUL) + nlibs
constexpr std::size_t kOldEntry = 12;   // flags, key, value
constexpr std::size_t kNewHeader =
    48;  // magic+version (20), nlibs, len_strings, flags, pad, ext, unused
constexpr std::size_t kNewEntry = 24;  // flags, key, value, osversion, hwcap
constexpr std::int32_t kFlagTypeMask = 0x00ff;
constexpr std::int32_t kFlagArchMask = 0xff00;
// The header's endianness byte as ldconfig writes it on a little-endian host.
constexpr std::uint8_t kLittleEndian = 2;

template <class T>
T load(std::string_view data, std::size_t at) {
  T v;
  std::memcpy(&v, data.data() + at, sizeof v);
  return v;
}

// No soname or path is longer; strings shared by many entries cannot add up past a bound.
constexpr std::size_t kMaxString = 4096;

// The NUL-terminated string at `offset` from `base`, or nullopt when it runs off the end or
// past kMaxString.
std::optional<std::string> string_at(std::string_view data, std::size_t base,
                                     std::uint32_t offset) {
  const std::size_t at = base + offset;
  if (at >= data.size()) return std::nullopt;
  const auto end = data.find('\0', at);
  if (end == std::string_view::npos || end - at > kMaxString) return std::nullopt;
  return std::string(data.substr(at, end - at));
}

LibArch arch_of_flags(std::int32_t flags) {
  const std::int32_t type = flags & kFlagTypeMask;
  if (type != kLdFlagElf && type != kLdFlagElfLibc6) return LibArch::kOther;
  if ((flags & kFlagArchMask) == kLdFlagX8664Lib64) return LibArch::k64;
  if ((flags & kFlagArchMask) == 0) return LibArch::k32;
  return LibArch::kOther;
}

Result<std::size_t> new_format_offset(std::string_view data) {
  if (data.substr(0, kOldMagic.size()) != kOldMagic) return std::size_t{0};
  if (data.size() < kOldHeader) return Error{"truncated header"};
  const auto nlibs = load<std::uint32_t>(data, 12);
  if (nlibs > (data.size() - kOldHeader) / kOldEntry) return Error{"entry count exceeds the file"};
  const std::size_t end = kOldHeader + std::size_t{nlibs} * kOldEntry;
  return (end + 7) & ~std::size_t{7};
}

}  // namespace

LibArch ld_cache_arch(std::int32_t flags) {
  return arch_of_flags(flags);
}

Result<LdCache> read_ld_cache(std::string_view data) {
  auto base = new_format_offset(data);
  if (!base) return base.error();
  if (data.size() < *base + kNewHeader || data.substr(*base, kNewMagic.size()) != kNewMagic) {
    return Error{"not a glibc ld.so.cache (new format)"};
  }
  const auto nlibs = load<std::uint32_t>(data, *base + 20);
  if (nlibs > (data.size() - *base - kNewHeader) / kNewEntry)
    return Error{"entry count exceeds the file"};
  LdCache cache;
  cache.old_section = *base != 0;
  cache.entries.reserve(nlibs);
  for (std::uint32_t i = 0; i < nlibs; ++i) {
    const std::size_t at = *base + kNewHeader + std::size_t{i} * kNewEntry;
    const auto flags = load<std::int32_t>(data, at);
    const auto key = string_at(data, *base, load<std::uint32_t>(data, at + 4));
    const auto value = string_at(data, *base, load<std::uint32_t>(data, at + 8));
    if (!key || !value) return Error{"string offset outside the file, or too long"};
    cache.entries.push_back(LdCacheEntry{*key, *value, arch_of_flags(flags), flags,
                                         load<std::uint64_t>(data, at + 16),
                                         load<std::uint32_t>(data, at + 12)});
  }
  return cache;
}

Result<std::vector<LdCacheEntry>> parse_ld_cache(std::string_view data) {
  auto cache = read_ld_cache(data);
  if (!cache) return cache.error();
  return std::move(cache->entries);
}

// As the loader compares: bytes as (signed) char, digit runs as an int that wraps.
int compare_sonames(std::string_view a, std::string_view b) {
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
      if (diff != 0) return diff < 0 ? -1 : 1;
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

void sort_ld_cache(std::vector<LdCacheEntry>& entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const LdCacheEntry& a, const LdCacheEntry& b) {
                     const int by_name = compare_sonames(a.soname, b.soname);
                     if (by_name != 0) return by_name > 0;
                     return a.flags > b.flags;
                   });
}

std::string write_ld_cache(const std::vector<LdCacheEntry>& entries) {
  const std::size_t strings_at = kNewHeader + entries.size() * kNewEntry;
  std::string strings;
  std::string table;
  const auto put32 = [](std::string& out, std::uint32_t v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  };
  const auto add_string = [&](const std::string& s) {
    const auto at = static_cast<std::uint32_t>(strings_at + strings.size());
    strings += s;
    strings.push_back('\0');
    return at;
  };
  for (const auto& e : entries) {
    put32(table, static_cast<std::uint32_t>(e.flags));
    put32(table, add_string(e.soname));
    put32(table, add_string(e.path));
    put32(table, e.osversion);
    table.append(reinterpret_cast<const char*>(&e.hwcap), sizeof e.hwcap);
  }
  std::string out(kNewMagic);
  put32(out, static_cast<std::uint32_t>(entries.size()));
  put32(out, static_cast<std::uint32_t>(strings.size()));
  out.push_back(static_cast<char>(kLittleEndian));
  out.append(3 + 4 + 12, '\0');  // padding, extension offset (none), unused
  return out + table + strings;
}

}  // namespace gcr
