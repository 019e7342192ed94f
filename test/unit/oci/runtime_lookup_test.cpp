#include <doctest/doctest.h>

#include "oci/runtime_lookup.h"
#include "test_support.h"

using gcr::find_low_level_runtime;
using gcr::test::TempDir;
using gcr::test::write_file;

TEST_CASE("absolute paths and names searched in PATH") {
  TempDir dir;
  write_file(dir / "bin/runc", "#!/bin/sh\n", 0755);
  write_file(dir / "other/crun", "#!/bin/sh\n", 0755);
  CHECK(*find_low_level_runtime({dir / "bin/runc"}, "") == dir / "bin/runc");
  CHECK(*find_low_level_runtime({"crun"}, dir / "bin:" + dir / "other") == dir / "other/crun");
  CHECK(*find_low_level_runtime({"missing-rt", "crun"}, dir / "other") == dir / "other/crun");
}

TEST_CASE("non-executables and directories are skipped") {
  TempDir dir;
  write_file(dir / "bin/runc", "#!/bin/sh\n", 0644);
  gcr::test::make_dirs(dir / "bin/crun");
  auto r = find_low_level_runtime({dir / "bin/runc", "crun-not-anywhere"}, dir / "bin");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "no low-level runtime found: tried " + dir / "bin/runc" +
                                 " (not an executable file), crun-not-anywhere (not in PATH)");
}

TEST_CASE("a candidate that is the shim itself is skipped, through symlinks") {
  TempDir dir;
  write_file(dir / "shim", "#!/bin/sh\n", 0755);
  gcr::test::make_symlink(dir / "shim", dir / "bin/runc");
  write_file(dir / "later/runc", "#!/bin/sh\n", 0755);
  const std::string self = dir / "shim";
  CHECK(*find_low_level_runtime({"runc"}, dir / "bin:" + dir / "later", self) ==
        dir / "later/runc");
  auto r = find_low_level_runtime({dir / "bin/runc", "runc"}, dir / "bin", self);
  if (r.ok()) {
    // a runc elsewhere on the default search path is fine, as long as it is not us
    CHECK(r.value() != dir / "bin/runc");
  } else {
    CHECK(r.error().message.find("(is this shim)") != std::string::npos);
  }
}
