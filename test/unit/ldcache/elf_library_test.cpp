#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "base/fs.h"
#include "hostile_image.h"
#include "ldcache/elf_library.h"
#include "ldcache/ldcache.h"
#include "sim_host.h"
#include "test_support.h"

namespace {

gcr::Result<gcr::ElfLibrary> read(const std::string& path) {
  gcr::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  gcr::ImageBudget budget;
  return gcr::read_elf_library(fd.get(), budget, path);
}

using gcr::test::kStubs;
using gcr::test::kVersion;

}  // namespace

TEST_CASE("what ldconfig reads from a library: soname and flags by class and needs") {
  auto lib64 = read(kStubs + "/lib64/libcuda.so." + kVersion);
  REQUIRE(lib64.ok());
  CHECK(lib64->soname == "libcuda.so.1");
  CHECK(lib64->flags == (gcr::kLdFlagElfLibc6 | gcr::kLdFlagX8664Lib64));
  // A 32-bit library is "libc6" to ldconfig only when it needs glibc (the stub does or not,
  // by build flags), else "ELF".
  const std::string path32 = kStubs + "/lib32/libcuda.so." + kVersion;
  auto lib32 = read(path32);
  REQUIRE(lib32.ok());
  CHECK(lib32->soname == "libcuda.so.1");
  const bool needs_libc =
      gcr::test::run({"/usr/bin/readelf", "-d", path32}).out.find("[libc.so.6]") !=
      std::string::npos;
  CHECK(lib32->flags == (needs_libc ? gcr::kLdFlagElfLibc6 : gcr::kLdFlagElf));
  auto nvml = read(kStubs + "/lib64/libnvidia-ml.so." + kVersion);
  REQUIRE(nvml.ok());
  CHECK(nvml->soname == "libnvidia-ml.so.1");
}

TEST_CASE("what the in-process update leaves to ldconfig is an error") {
  gcr::test::TempDir t;
  gcr::test::write_file(t / "script", "/* GNU ld script */\nGROUP ( libc.so.6 )\n");
  auto text = read(t / "script");
  REQUIRE_FALSE(text.ok());
  CHECK(text.error().message == gcr::kNotElf);
  CHECK(text.error().kind == gcr::ErrorKind::kNotElf);
  CHECK(text.error().wrap("in /lib").kind == gcr::ErrorKind::kNotElf);
  // An executable (a program interpreter) and a truncated library are not indexed here.
  CHECK_FALSE(read("/bin/sh").ok());
  const std::string lib = gcr::test::read_file(kStubs + "/lib64/libcuda.so." + kVersion);
  gcr::test::write_file(t / "truncated.so", lib.substr(0, 200));
  auto truncated = read(t / "truncated.so");
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated.error().message != gcr::kNotElf);
  CHECK(truncated.error().kind == gcr::ErrorKind::kNone);
}

namespace {

// `image` as a file to read, in memory.
gcr::Fd memory_file(const std::string& image) {
  gcr::Fd fd(::memfd_create("elf", MFD_CLOEXEC));
  REQUIRE(fd.valid());
  REQUIRE(::pwrite(fd.get(), image.data(), image.size(), 0) == static_cast<ssize_t>(image.size()));
  return fd;
}

}  // namespace

TEST_CASE("needed entries: looked up in one read of the string table, within the budget") {
  const auto few = memory_file(gcr::test::elf_with_needed("libfew.so.1", 10, 4000));
  gcr::ImageBudget budget;
  auto lib = gcr::read_elf_library(few.get(), budget, "libfew.so.1");
  REQUIRE_MESSAGE(lib.ok(), (lib.ok() ? "" : lib.error().message));
  CHECK(lib->soname == "libfew.so.1");
  CHECK(lib->flags == (gcr::kLdFlagElfLibc6 | gcr::kLdFlagX8664Lib64));
  // 4,093 needed entries naming one 4,000-byte string: over the budget of one library.
  const auto many = memory_file(gcr::test::elf_with_needed("libmany.so.1", 4093, 4000));
  gcr::ImageBudget fresh;
  auto refused = gcr::read_elf_library(many.get(), fresh, "/lib/libmany.so.1");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message ==
        "over the image budget of 1024 string lookups in one library (/lib/libmany.so.1)");
  // Within it each, libraries add up to the plan's budget.
  const auto most = memory_file(gcr::test::elf_with_needed("libmost.so.1", 1000, 4000));
  gcr::ImageBudget plan;
  std::size_t read = 0;
  while (gcr::read_elf_library(most.get(), plan, "libmost.so.1").ok()) ++read;
  CHECK(read == gcr::kBudgetLookups / 1001);
  REQUIRE(plan.exceeded());
  CHECK(plan.exceeded()->message ==
        "over the image budget of 65536 string lookups in libraries (libmost.so.1)");
}

TEST_CASE("a soname longer than a file name is left to ldconfig") {
  const auto fd = memory_file(gcr::test::elf_with_needed("lib" + std::string(300, 'x'), 1, 10));
  gcr::ImageBudget budget;
  auto lib = gcr::read_elf_library(fd.get(), budget, "libx");
  REQUIRE_FALSE(lib.ok());
  CHECK(lib.error().message == "a soname that is not a file name");
}
