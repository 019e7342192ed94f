#include <doctest/doctest.h>

#include <cstring>

#include <algorithm>

#include "base/fs.h"
#include "hostile_image.h"
#include "ldcache/ldcache.h"
#include "test_support.h"

namespace {

// A new-format cache with the given entries (flags, key, value), optionally behind an old-format
// section.
std::string make_cache(const std::vector<std::tuple<int, std::string, std::string>>& entries,
                       bool old_section) {
  std::string strings;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
  const std::size_t header = 48 + entries.size() * 24;
  for (const auto& [flags, key, value] : entries) {
    const auto k = static_cast<std::uint32_t>(header + strings.size());
    strings += key + '\0';
    const auto v = static_cast<std::uint32_t>(header + strings.size());
    strings += value + '\0';
    offsets.emplace_back(k, v);
  }
  std::string out("glibc-ld.so.cache1.1", 20);
  const auto put32 = [&](std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  put32(static_cast<std::uint32_t>(entries.size()));
  put32(static_cast<std::uint32_t>(strings.size()));
  out.append(20, '\0');  // flags, padding, extension offset, unused
  for (std::size_t i = 0; i < entries.size(); ++i) {
    put32(static_cast<std::uint32_t>(std::get<0>(entries[i])));
    put32(offsets[i].first);
    put32(offsets[i].second);
    out.append(12, '\0');
  }
  out += strings;
  if (!old_section) return out;
  std::string old("ld.so-1.7.0\0", 12);
  const std::uint32_t n = 1;
  old.append(reinterpret_cast<const char*>(&n), 4);
  old.append(12, '\0');  // one old entry
  old.append(4, '\0');   // pad to 8
  return old + out;
}

}  // namespace

TEST_CASE("new-format entries with architectures") {
  const auto data = make_cache({{0x0303, "libcuda.so.1", "/usr/lib64/libcuda.so.1"},
                                {0x0003, "libcuda.so.1", "/usr/lib/libcuda.so.1"},
                                {0x0001, "libfoo.so.1", "/usr/lib/libfoo.so.1"},
                                {0x0a03, "libarm.so.1", "/usr/lib/aarch64/libarm.so.1"}},
                               false);
  const auto entries = gcr::parse_ld_cache(data);
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 4);
  CHECK((*entries)[0].soname == "libcuda.so.1");
  CHECK((*entries)[0].path == "/usr/lib64/libcuda.so.1");
  CHECK((*entries)[0].arch == gcr::LibArch::k64);
  CHECK((*entries)[1].arch == gcr::LibArch::k32);
  CHECK((*entries)[2].arch == gcr::LibArch::k32);
  CHECK((*entries)[3].arch == gcr::LibArch::kOther);
}

TEST_CASE("an old-format section in front is skipped") {
  const auto entries =
      gcr::parse_ld_cache(make_cache({{0x0303, "libcuda.so.1", "/x/libcuda.so.1"}}, true));
  REQUIRE(entries.ok());
  CHECK(entries->at(0).path == "/x/libcuda.so.1");
}

TEST_CASE("malformed caches are errors, not crashes") {
  CHECK_FALSE(gcr::parse_ld_cache("").ok());
  CHECK_FALSE(gcr::parse_ld_cache("not a cache at all, really not").ok());
  std::string truncated = make_cache({{0x0303, "libcuda.so.1", "/x"}}, false);
  CHECK_FALSE(gcr::parse_ld_cache(truncated.substr(0, 60)).ok());
  std::string huge_count = truncated;
  const std::uint32_t n = 0x7fffffff;
  std::memcpy(huge_count.data() + 20, &n, 4);
  CHECK_FALSE(gcr::parse_ld_cache(huge_count).ok());
  std::string bad_offset = truncated;
  const std::uint32_t off = 0xfffffff0;
  std::memcpy(bad_offset.data() + 48 + 4, &off, 4);
  CHECK_FALSE(gcr::parse_ld_cache(bad_offset).ok());
  std::string no_nul = truncated;
  no_nul.pop_back();
  CHECK_FALSE(gcr::parse_ld_cache(no_nul).ok());
}

TEST_CASE("the host's own cache agrees with ldconfig -p") {
  auto data = gcr::read_regular_file("/etc/ld.so.cache", 64u << 20);
  REQUIRE(data.ok());
  const auto entries = gcr::parse_ld_cache(*data);
  REQUIRE(entries.ok());
  const auto listing = gcr::test::run({"/sbin/ldconfig", "-p"});
  for (const auto& e : *entries) {
    if (e.soname != "libc.so.6" || e.arch != gcr::LibArch::k64) continue;
    CHECK(listing.out.find("libc.so.6 (libc6,x86-64) => " + e.path) != std::string::npos);
    return;
  }
  FAIL("libc.so.6 not found in /etc/ld.so.cache");
}

TEST_CASE("the loader's soname order: digit runs as numbers, then bytes") {
  CHECK(gcr::compare_sonames("libc.so.6", "libc.so.6") == 0);
  CHECK(gcr::compare_sonames("libfoo.so.10", "libfoo.so.9") > 0);
  CHECK(gcr::compare_sonames("libfoo.so.1", "libfoo.so.1.2") < 0);
  CHECK(gcr::compare_sonames("libfoo.so", "libfoo.so.1") < 0);
  CHECK(gcr::compare_sonames("libfoo1.so", "libfoo.so") > 0);  // a digit sorts after a letter
  CHECK(gcr::compare_sonames("liba.so", "libb.so") < 0);
  CHECK(gcr::compare_sonames("libx.so.007", "libx.so.7") == 0);
  // Bytes compare as the loader's signed char: a byte >= 0x80 sorts before ASCII.
  CHECK(gcr::compare_sonames("lib\xe9.so", "libz.so") < 0);
}

TEST_CASE("a cache string of PATH_MAX bytes or more is refused") {
  const std::string long_path = "/" + std::string(5000, 'x');
  CHECK_FALSE(gcr::parse_ld_cache(make_cache({{0x0303, "libx.so.1", long_path}}, false)).ok());
  CHECK_FALSE(
      gcr::parse_ld_cache(make_cache({{0x0303, "libx.so.1", long_path.substr(0, 4096)}}, false))
          .ok());
  CHECK(gcr::parse_ld_cache(make_cache({{0x0303, "libx.so.1", long_path.substr(0, 4095)}}, false))
            .ok());
}

TEST_CASE("a cache over the image budget is refused before its entries are copied") {
  // 16 MiB: about 699,000 entries, all naming one string of 4,095 bytes.
  const std::size_t most = (gcr::kBudgetCacheBytes - 48 - 4096) / 24;
  const std::string huge = gcr::test::ld_cache_sharing_one_string(most, 4095);
  REQUIRE(huge.size() <= gcr::kBudgetCacheBytes);
  gcr::ImageBudget budget;
  auto read = gcr::read_ld_cache(huge, budget, "/etc/ld.so.cache");
  REQUIRE_FALSE(read.ok());
  CHECK(read.error().message ==
        "over the image budget of 65536 loader-cache entries (/etc/ld.so.cache)");
  REQUIRE(budget.exceeded());
  CHECK(budget.exceeded()->message == read.error().message);
  // Within the entry budget, the names the entries give add up: refused at 8 MiB of them.
  gcr::ImageBudget names;
  auto shared =
      gcr::read_ld_cache(gcr::test::ld_cache_sharing_one_string(gcr::kBudgetCacheEntries, 4095),
                         names, "/etc/ld.so.cache");
  REQUIRE_FALSE(shared.ok());
  CHECK(shared.error().message ==
        "over the image budget of 8388608 bytes of loader-cache names and paths "
        "(/etc/ld.so.cache)");
  // A cache as big as the budgets allow is read, its strings views of the data.
  gcr::ImageBudget fits;
  const std::string data = gcr::test::ld_cache_sharing_one_string(1000, 4095);
  auto ok = gcr::read_ld_cache(data, fits, "/etc/ld.so.cache");
  REQUIRE(ok.ok());
  REQUIRE(ok->entries.size() == 1000);
  CHECK(ok->entries[999].path.data() == ok->entries[0].path.data());
  CHECK(ok->entries[0].path.data() >= data.data());
  CHECK(ok->entries[0].path.size() == 4095);
  CHECK_FALSE(fits.exceeded());
}

namespace {

// Names whose digit runs the loader adds up past INT_MAX, and ordinary ones around them.
std::vector<std::string> names_with_long_runs() {
  std::vector<std::string> names{"lib.so",           "libx.so",          "lib\xe9.so",
                                 "lib0.so",          "lib007.so",        "lib7.so.1",
                                 "lib7a.so",         "lib2147483647.so", "lib2147483648.so",
                                 "lib4294967296.so", "lib4294967303.so"};
  for (std::size_t run = 1; run <= 24; ++run) {
    names.push_back("lib" + std::string(run, '7') + ".so");
    names.push_back("libfoo.so." + std::string(run, '7'));
  }
  return names;
}

}  // namespace

TEST_CASE("compare_sonames is a strict weak order, also on names with long runs of 7s") {
  const auto names = names_with_long_runs();
  const auto less = [](const std::string& a, const std::string& b) {
    return gcr::compare_sonames(a, b) < 0;
  };
  for (const auto& a : names) {
    CAPTURE(a);
    CHECK_FALSE(less(a, a));
    for (const auto& b : names) {
      CAPTURE(b);
      CHECK_FALSE((less(a, b) && less(b, a)));
      for (const auto& c : names) {
        CAPTURE(c);
        if (less(a, b) && less(b, c)) CHECK(less(a, c));
        const bool ab = !less(a, b) && !less(b, a);
        const bool bc = !less(b, c) && !less(c, b);
        if (ab && bc) CHECK((!less(a, c) && !less(c, a)));
      }
    }
  }
  // Digit runs compare as the numbers they write, however long.
  CHECK(gcr::compare_sonames("lib77777777777.so", "lib7777777777.so") > 0);
  CHECK(gcr::compare_sonames("lib4294967296.so", "lib0.so") > 0);
  CHECK(gcr::compare_sonames("lib0004294967296.so", "lib4294967296.so") == 0);
}

TEST_CASE("loader_orders: a digit run above INT_MAX is one the loader cannot order") {
  CHECK(gcr::loader_orders("libfoo.so.1.2.3"));
  CHECK(gcr::loader_orders("libx.so.2147483647"));
  CHECK(gcr::loader_orders("libx.so.000000000000000002147483647"));
  CHECK_FALSE(gcr::loader_orders("libx.so.2147483648"));
  CHECK_FALSE(gcr::loader_orders("lib" + std::string(10, '7') + ".so"));
  CHECK(gcr::loader_orders("lib" + std::string(9, '7') + ".so"));
}

TEST_CASE("the fuzz target's crash (names with long runs of 7s) sorts in a consistent order") {
  const std::string data =
      gcr::test::read_file(gcr::test::test_source("fuzz/corpus/ldcache/order-crash.bin"));
  gcr::ImageBudget budget;
  auto cache = gcr::read_ld_cache(data, budget, "ld.so.cache");
  REQUIRE(cache.ok());
  REQUIRE(cache->entries.size() > 1);
  CHECK(std::any_of(cache->entries.begin(), cache->entries.end(),
                    [](const gcr::LdCacheRef& e) { return !gcr::loader_orders(e.soname); }));
  gcr::sort_ld_cache(cache->entries);
  for (std::size_t i = 1; i < cache->entries.size(); ++i) {
    CAPTURE(i);
    CHECK(gcr::compare_sonames(cache->entries[i - 1].soname, cache->entries[i].soname) >= 0);
  }
}

TEST_CASE("sort_ld_cache: sonames descending, then flags descending, ties kept in order") {
  std::vector<gcr::LdCacheRef> entries{
      {"liba.so.1", "/first/liba.so.1", gcr::LibArch::k64, 0x0303, 0},
      {"libb.so.1", "/x/libb.so.1", gcr::LibArch::k64, 0x0303, 0},
      {"liba.so.1", "/y/liba.so.1", gcr::LibArch::k32, 0x0003, 0},
      {"liba.so.1", "/second/liba.so.1", gcr::LibArch::k64, 0x0303, 0},
      {"liba.so.10", "/x/liba.so.10", gcr::LibArch::k64, 0x0303, 0}};
  gcr::sort_ld_cache(entries);
  std::vector<std::string> paths;
  for (const auto& e : entries) paths.emplace_back(e.path);
  CHECK(paths == std::vector<std::string>{"/x/libb.so.1", "/x/liba.so.10", "/first/liba.so.1",
                                          "/second/liba.so.1", "/y/liba.so.1"});
}

TEST_CASE("write_ld_cache: what ldconfig -p and our reader read back") {
  const std::vector<gcr::LdCacheRef> entries{
      {"libcuda.so.1", "/usr/lib64/libcuda.so.1", gcr::LibArch::k64, 0x0303, 0},
      {"libcuda.so.1", "/usr/lib/libcuda.so.1", gcr::LibArch::k32, 0x0001, 0}};
  const std::string data = gcr::write_ld_cache(entries);
  gcr::ImageBudget budget;
  auto back = gcr::read_ld_cache(data, budget, "ld.so.cache");
  REQUIRE(back.ok());
  CHECK_FALSE(back->old_section);
  REQUIRE(back->entries.size() == 2);
  CHECK(back->entries[1].path == "/usr/lib/libcuda.so.1");
  CHECK(back->entries[1].flags == 0x0001);
  CHECK(back->entries[0].arch == gcr::LibArch::k64);
  gcr::test::TempDir t;
  gcr::test::write_file(t / "ld.so.cache", data);
  const auto listing = gcr::test::run({"/sbin/ldconfig", "-p", "-C", t / "ld.so.cache"}).out;
  CHECK(listing.find("2 libs found") != std::string::npos);
  CHECK(listing.find("libcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1") !=
        std::string::npos);
  CHECK(listing.find("libcuda.so.1 (ELF) => /usr/lib/libcuda.so.1") != std::string::npos);
}
