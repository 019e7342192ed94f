// A real container: real runc behind the shim runs a busybox rootfs built by the test.
#include <doctest/doctest.h>

#include "shim_fixture.h"

using gcr::Json;

TEST_CASE("a busybox container runs through the shim and real runc") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers with runc needs root");
  const std::string runc = gcr::test::runc_path();
  gcr::test::ShimFixture f;
  f.write_config({{"runtime", {{"runtimes", {runc}}}}});
  gcr::test::make_busybox_rootfs(f.bundle());
  f.write_spec(gcr::test::busybox_spec({"/bin/sh", "-c", "echo hello from $(hostname)"}).dump(2));
  const std::string root = f.path("runc-root");
  const auto result = f.shim({"--root", root, "run", "--bundle", f.bundle(), "gcr-busybox-test"});
  CHECK(result.err == "");
  CHECK(result.exit_code == 0);
  CHECK(result.out == "hello from gcr-test\n");
  (void)gcr::test::run({runc, "--root", root, "delete", "--force", "gcr-busybox-test"});
}
