// The in-process loader cache declines what it cannot write exactly as ldconfig would, or what
// would cost more than the image budget: the caller then runs ldconfig.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include "hooks/ldcache_in_process.h"
#include "hooks/rootfs.h"
#include "ldcache/ldcache.h"
#include "test_support.h"

namespace {

// The plan for folder /usr/lib/nv in a rootfs whose /etc/ld.so.cache is `cache`, the folder
// holding the directory `subdirectory` where one is named.
gcr::Result<gcr::LdcachePlan> plan_with_cache(const std::string& cache,
                                              const std::string& subdirectory = "") {
  gcr::test::TempDir t;
  const std::string r = t / "rootfs";
  gcr::test::write_file(r + "/etc/ld.so.cache", cache);
  gcr::test::make_dirs(r + "/usr/lib/nv" + (subdirectory.empty() ? "" : "/" + subdirectory));
  auto root = gcr::RootFs::open(r);
  REQUIRE(root.ok());
  gcr::ImageBudget budget;
  const auto conf = gcr::read_ld_so_conf(*root, budget);
  return gcr::plan_ldcache_update(*root, conf, {"/usr/lib/nv"}, {"/usr/lib/nv"}, budget);
}

}  // namespace

TEST_CASE("a cache whose names the loader cannot order is left to ldconfig") {
  const std::string soname = "libx.so." + std::string(12, '7');
  const std::string path = "/usr/lib/" + soname;
  const std::vector<gcr::LdCacheRef> entries{{soname, path, gcr::LibArch::k64, 0x0303, 0}};
  auto plan = plan_with_cache(gcr::write_ld_cache(entries));
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.error().message ==
        "a soname with a digit run above 2147483647, which the loader cannot order "
        "(/etc/ld.so.cache)");
  const std::vector<gcr::LdCacheRef> ordinary{
      {"libx.so.1", "/usr/lib/libx.so.1", gcr::LibArch::k64, 0x0303, 0}};
  auto other = plan_with_cache(gcr::write_ld_cache(ordinary));
  REQUIRE_FALSE(other.ok());  // /usr/lib/libx.so.1 is not there
  CHECK(other.error().message.find("cannot order") == std::string::npos);
}

TEST_CASE("the crashing input of the ldcache fuzz target is left to ldconfig") {
  auto plan = plan_with_cache(
      gcr::test::read_file(gcr::test::test_source("fuzz/corpus/ldcache/order-crash.bin")));
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.error().message.find("cannot order") != std::string::npos);
}

TEST_CASE("a library to be mounted that discovery read is indexed from what it read") {
  gcr::test::TempDir t;
  const std::string r = t / "rootfs";
  gcr::test::write_file(r + "/etc/ld.so.cache", gcr::write_ld_cache({}));
  gcr::test::make_dirs(r + "/usr/lib/nv");
  // Not an ELF file: read, ldconfig would pass it by.
  gcr::test::write_file(t / "host/libfoo.so.1.2.3", "not ELF");
  auto root = gcr::RootFs::open(r);
  REQUIRE(root.ok());
  const auto plan_with = [&](std::optional<gcr::ElfLibrary> elf) {
    gcr::ImageBudget budget;
    const auto conf = gcr::read_ld_so_conf(*root, budget);
    const gcr::PendingFiles pending{
        {"/usr/lib/nv/libfoo.so.1.2.3", gcr::PendingFile{t / "host/libfoo.so.1.2.3", elf}}};
    return gcr::plan_ldcache_update(*root, conf, {"/usr/lib/nv"}, {"/usr/lib/nv"}, budget, pending);
  };
  auto read = plan_with(std::nullopt);
  REQUIRE(read.ok());
  CHECK(read->links.empty());
  auto known = plan_with(gcr::ElfLibrary{"libfoo.so.1", 0x0303});
  REQUIRE(known.ok());
  CHECK(known->links == std::vector<std::string>{"libfoo.so.1.2.3::/usr/lib/nv/libfoo.so.1"});
  gcr::ImageBudget budget;
  auto cache = gcr::read_ld_cache(known->cache, budget, "cache");
  REQUIRE(cache.ok());
  REQUIRE(cache->entries.size() == 1);
  CHECK(cache->entries[0].soname == "libfoo.so.1");
  CHECK(cache->entries[0].path == "/usr/lib/nv/libfoo.so.1");
  // A link to it, its development name, is indexed from what discovery read too: the file on
  // the host is not read again.
  gcr::test::make_symlink("libfoo.so.1.2.3", r + "/usr/lib/nv/libfoo.so");
  auto linked = plan_with(gcr::ElfLibrary{"libfoo.so.1", 0x0303});
  REQUIRE(linked.ok());
  auto with_link = gcr::read_ld_cache(linked->cache, budget, "cache");
  REQUIRE(with_link.ok());
  REQUIRE(with_link->entries.size() == 2);
  CHECK(with_link->entries[0].soname == "libfoo.so.1");
  CHECK(with_link->entries[1].soname == "libfoo.so");
  CHECK(with_link->entries[1].path == "/usr/lib/nv/libfoo.so");
}

TEST_CASE("a cache that already holds the plan is kept as read, unless it changed since") {
  gcr::test::TempDir t;
  const std::string r = t / "rootfs";
  gcr::test::make_dirs(r + "/usr/lib/nv");
  gcr::test::write_file(r + "/etc/ld.so.cache", gcr::write_ld_cache({}));
  REQUIRE(::chmod((r + "/etc/ld.so.cache").c_str(), 0644) == 0);
  auto root = gcr::RootFs::open(r);
  REQUIRE(root.ok());
  const auto plan = [&] {
    gcr::ImageBudget budget;
    const auto conf = gcr::read_ld_so_conf(*root, budget);
    auto made = gcr::plan_ldcache_update(*root, conf, {"/usr/lib/nv"}, {}, budget);
    REQUIRE(made.ok());
    return *made;
  };
  const auto inode = [&] {
    struct stat st {};
    REQUIRE(::lstat((r + "/etc/ld.so.cache").c_str(), &st) == 0);
    return st.st_ino;
  };
  const auto held = plan();
  REQUIRE(held.cache_as_read.has_value());
  const auto kept = inode();
  REQUIRE(gcr::apply_ldcache_plan(*root, held).ok());
  CHECK(inode() == kept);
  // Another file of that size put at the name after the plan read it: written again.
  std::string changed = held.cache;
  changed.back() ^= 1;
  gcr::test::write_file(t / "other", changed);
  REQUIRE(::chmod((t / "other").c_str(), 0644) == 0);
  REQUIRE(::rename((t / "other").c_str(), (r + "/etc/ld.so.cache").c_str()) == 0);
  REQUIRE(gcr::apply_ldcache_plan(*root, held).ok());
  CHECK(gcr::test::read_file(r + "/etc/ld.so.cache") == held.cache);
  // A cache that does not hold the plan yet (a library to be mounted into the folder).
  gcr::test::write_file(t / "host/libfoo.so.1.2.3", "not ELF");
  gcr::ImageBudget budget;
  const auto conf = gcr::read_ld_so_conf(*root, budget);
  const gcr::PendingFiles pending{
      {"/usr/lib/nv/libfoo.so.1.2.3",
       gcr::PendingFile{t / "host/libfoo.so.1.2.3", gcr::ElfLibrary{"libfoo.so.1", 0x0303}}}};
  auto adds = gcr::plan_ldcache_update(*root, conf, {"/usr/lib/nv"}, {}, budget, pending);
  REQUIRE(adds.ok());
  CHECK(adds->cache != held.cache);
  CHECK_FALSE(adds->cache_as_read.has_value());
}

TEST_CASE("a folder with a hardware-capability subdirectory is left to ldconfig") {
  const auto plan_beside = [](const std::string& sub) {
    return plan_with_cache(gcr::write_ld_cache({}), sub);
  };
  for (const char* sub : {"glibc-hwcaps", "tls", "x86_64", "haswell", "xeon_phi", "avx512_1",
                          "i386", "i486", "i586", "i686", "sse2"}) {
    CAPTURE(sub);
    auto plan = plan_beside(sub);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error().message == std::string("/usr/lib/nv/") + sub + ": hwcap subdirectories");
  }
  // Names that only begin or end like one are other directories.
  for (const char* sub : {"tlsx", "i38", "x86_64-v3", "sse"}) {
    CAPTURE(sub);
    CHECK(plan_beside(sub).ok());
  }
}
