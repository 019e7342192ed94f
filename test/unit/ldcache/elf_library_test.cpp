#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "base/fs.h"
#include "ldcache/elf_library.h"
#include "ldcache/ldcache.h"
#include "test_support.h"

namespace {

gcr::Result<gcr::ElfLibrary> read(const std::string& path) {
  gcr::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  return gcr::read_elf_library(fd.get());
}

const std::string kStubs = GCR_STUB_DIR;
const std::string kVersion = GCR_STUB_DRIVER_VERSION;

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
  // An executable (a program interpreter) and a truncated library are not indexed here.
  CHECK_FALSE(read("/bin/sh").ok());
  const std::string lib = gcr::test::read_file(kStubs + "/lib64/libcuda.so." + kVersion);
  gcr::test::write_file(t / "truncated.so", lib.substr(0, 200));
  auto truncated = read(t / "truncated.so");
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated.error().message != gcr::kNotElf);
}
