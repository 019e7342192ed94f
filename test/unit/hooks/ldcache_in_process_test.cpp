// The in-process loader cache declines what it cannot write exactly as ldconfig would, or what
// would cost more than the image budget: the caller then runs ldconfig.
#include <doctest/doctest.h>

#include "hooks/ldcache_in_process.h"
#include "hooks/rootfs.h"
#include "ldcache/ldcache.h"
#include "test_support.h"

namespace {

// The plan for folder /usr/lib/nv in a rootfs whose /etc/ld.so.cache is `cache`.
gcr::Result<gcr::LdcachePlan> plan_with_cache(const std::string& cache) {
  gcr::test::TempDir t;
  const std::string r = t / "rootfs";
  gcr::test::write_file(r + "/etc/ld.so.cache", cache);
  gcr::test::make_dirs(r + "/usr/lib/nv");
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
