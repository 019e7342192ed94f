#include "ldcache/ldcache.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <optional>

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

// The NUL-terminated string at `offset` from `base`, a view of `data`: nothing when it runs off
// the end or is PATH_MAX bytes or longer (no path is).
std::optional<std::string_view> string_at(std::string_view data, std::size_t base,
                                          std::uint32_t offset) {
  const std::size_t at = base + offset;
  if (at >= data.size()) return std::nullopt;
  const std::string_view rest = data.substr(at, PATH_MAX);
  const auto end = rest.find('\0');
  if (end == std::string_view::npos) return std::nullopt;
  return rest.substr(0, end);
}

Error failure(const std::string& why, std::string_view file) {
  return Error{file.empty() ? why : why + " (" + std::string(file) + ")"};
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

char char_at(std::string_view s, std::size_t i) {
  return i < s.size() ? s[i] : '\0';
}

// The digit run at `i` without its leading zeros; `i` moves past the run.
std::string_view digit_run(std::string_view s, std::size_t& i) {
  while (char_at(s, i) == '0') ++i;
  const std::size_t start = i;
  while (is_digit(char_at(s, i))) ++i;
  return s.substr(start, i - start);
}

// Two digit runs without leading zeros as the numbers they write.
int compare_numbers(std::string_view x, std::string_view y) {
  if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
  return x.compare(y);
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

Result<LdCache> read_ld_cache(std::string_view data, ImageBudget& budget, std::string_view file) {
  auto base = new_format_offset(data);
  if (!base) return failure(base.error().message, file);
  if (data.size() < *base + kNewHeader || data.substr(*base, kNewMagic.size()) != kNewMagic) {
    return failure("not a glibc ld.so.cache (new format)", file);
  }
  const auto nlibs = load<std::uint32_t>(data, *base + 20);
  if (nlibs > (data.size() - *base - kNewHeader) / kNewEntry)
    return failure("entry count exceeds the file", file);
  if (auto s = budget.charge(Budget::kCacheEntries, nlibs, file); !s) return s.error();
  LdCache cache;
  cache.old_section = *base != 0;
  cache.entries.reserve(nlibs);
  for (std::uint32_t i = 0; i < nlibs; ++i) {
    const std::size_t at = *base + kNewHeader + std::size_t{i} * kNewEntry;
    const auto flags = load<std::int32_t>(data, at);
    const auto key = string_at(data, *base, load<std::uint32_t>(data, at + 4));
    const auto value = string_at(data, *base, load<std::uint32_t>(data, at + 8));
    if (!key || !value) return failure("string offset outside the file, or too long", file);
    if (auto s = budget.charge(Budget::kCacheStringBytes, key->size() + value->size(), file); !s)
      return s.error();
    cache.entries.push_back(LdCacheRef{*key, *value, arch_of_flags(flags), flags,
                                       load<std::uint64_t>(data, at + 16),
                                       load<std::uint32_t>(data, at + 12)});
  }
  return cache;
}

Result<std::vector<LdCacheEntry>> parse_ld_cache(std::string_view data) {
  ImageBudget budget = ImageBudget::untimed();
  auto cache = read_ld_cache(data, budget, "");
  if (!cache) return cache.error();
  std::vector<LdCacheEntry> entries;
  entries.reserve(cache->entries.size());
  for (const auto& e : cache->entries) {
    entries.push_back(LdCacheEntry{std::string(e.soname), std::string(e.path), e.arch, e.flags,
                                   e.hwcap, e.osversion});
  }
  return entries;
}

// The loader's order (_dl_cache_libcmp) with digit runs compared exactly: where the loader's
// 32-bit sums do not wrap (loader_orders), the same.
int compare_sonames(std::string_view a, std::string_view b) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (char_at(a, i) != '\0') {
    const bool digit_a = is_digit(char_at(a, i));
    const bool digit_b = is_digit(char_at(b, j));
    if (digit_a && digit_b) {
      const int by_value = compare_numbers(digit_run(a, i), digit_run(b, j));
      if (by_value != 0) return by_value;
    } else if (digit_a) {
      return 1;
    } else if (digit_b) {
      return -1;
    } else if (char_at(a, i) != char_at(b, j)) {
      return static_cast<signed char>(char_at(a, i)) - static_cast<signed char>(char_at(b, j));
    } else {
      ++i;
      ++j;
    }
  }
  return -static_cast<signed char>(char_at(b, j));
}

bool loader_orders(std::string_view soname) {
  constexpr std::string_view kIntMax = "2147483647";
  for (std::size_t i = 0; i < soname.size();) {
    if (!is_digit(soname[i])) {
      ++i;
      continue;
    }
    if (compare_numbers(digit_run(soname, i), kIntMax) > 0) return false;
  }
  return true;
}

void sort_ld_cache(std::vector<LdCacheRef>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const LdCacheRef& a, const LdCacheRef& b) {
    const int by_name = compare_sonames(a.soname, b.soname);
    if (by_name != 0) return by_name > 0;
    return a.flags > b.flags;
  });
}

std::string write_ld_cache(const std::vector<LdCacheRef>& entries) {
  std::size_t strings = 0;
  for (const auto& e : entries) strings += e.soname.size() + e.path.size() + 2;
  const std::size_t strings_at = kNewHeader + entries.size() * kNewEntry;
  std::string out;
  out.reserve(strings_at + strings);
  const auto put32 = [&out](std::uint32_t v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  };
  out += kNewMagic;
  put32(static_cast<std::uint32_t>(entries.size()));
  put32(static_cast<std::uint32_t>(strings));
  out.push_back(static_cast<char>(kLittleEndian));
  out.append(3 + 4 + 12, '\0');  // padding, extension offset (none), unused
  std::size_t next = strings_at;
  for (const auto& e : entries) {
    put32(static_cast<std::uint32_t>(e.flags));
    put32(static_cast<std::uint32_t>(next));
    next += e.soname.size() + 1;
    put32(static_cast<std::uint32_t>(next));
    next += e.path.size() + 1;
    put32(e.osversion);
    out.append(reinterpret_cast<const char*>(&e.hwcap), sizeof e.hwcap);
  }
  for (const auto& e : entries) {
    out += e.soname;
    out.push_back('\0');
    out += e.path;
    out.push_back('\0');
  }
  return out;
}

}  // namespace gcr
