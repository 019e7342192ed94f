#include "driver/ldcache.h"

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
constexpr std::int32_t kFlagElf = 0x0001;
constexpr std::int32_t kFlagElfLibc6 = 0x0003;
constexpr std::int32_t kFlagTypeMask = 0x00ff;
constexpr std::int32_t kFlagArchMask = 0xff00;
constexpr std::int32_t kFlagX8664Lib64 = 0x0300;

template <class T>
T load(std::string_view data, std::size_t at) {
  T v;
  std::memcpy(&v, data.data() + at, sizeof v);
  return v;
}

// The NUL-terminated string at `offset` from `base`, or nullopt when it runs off the end.
std::optional<std::string> string_at(std::string_view data, std::size_t base,
                                     std::uint32_t offset) {
  const std::size_t at = base + offset;
  if (at >= data.size()) return std::nullopt;
  const auto end = data.find('\0', at);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(data.substr(at, end - at));
}

LibArch arch_of(std::int32_t flags) {
  const std::int32_t type = flags & kFlagTypeMask;
  if (type != kFlagElf && type != kFlagElfLibc6) return LibArch::kOther;
  if ((flags & kFlagArchMask) == kFlagX8664Lib64) return LibArch::k64;
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

Result<std::vector<LdCacheEntry>> parse_ld_cache(std::string_view data) {
  auto base = new_format_offset(data);
  if (!base) return base.error();
  if (data.size() < *base + kNewHeader || data.substr(*base, kNewMagic.size()) != kNewMagic) {
    return Error{"not a glibc ld.so.cache (new format)"};
  }
  const auto nlibs = load<std::uint32_t>(data, *base + 20);
  if (nlibs > (data.size() - *base - kNewHeader) / kNewEntry)
    return Error{"entry count exceeds the file"};
  std::vector<LdCacheEntry> entries;
  entries.reserve(nlibs);
  for (std::uint32_t i = 0; i < nlibs; ++i) {
    const std::size_t at = *base + kNewHeader + std::size_t{i} * kNewEntry;
    const auto flags = load<std::int32_t>(data, at);
    const auto key = string_at(data, *base, load<std::uint32_t>(data, at + 4));
    const auto value = string_at(data, *base, load<std::uint32_t>(data, at + 8));
    if (!key || !value) return Error{"string offset outside the file"};
    entries.push_back(LdCacheEntry{*key, *value, arch_of(flags)});
  }
  return entries;
}

}  // namespace gcr
