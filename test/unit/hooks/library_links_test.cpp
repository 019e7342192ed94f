// Where an image's library links lead, followed inside the root as ldconfig follows them.
#include <doctest/doctest.h>

#include "hooks/library_links.h"
#include "test_support.h"

using gcr::test::make_dirs;
using gcr::test::make_symlink;
using gcr::test::TempDir;
using gcr::test::write_file;

namespace {

const std::string kMultiarchDir = "/usr/lib/x86_64-linux-gnu";

std::vector<std::string> paths_from(const std::string& rootfs,
                                    const std::vector<std::string>& dirs) {
  auto root = gcr::RootFs::open(rootfs);
  REQUIRE(root.ok());
  gcr::ImageBudget budget;
  gcr::ResolvedDirs known;
  auto paths = gcr::library_link_paths(*root, dirs, budget, known);
  REQUIRE_MESSAGE(paths.ok(), (paths.ok() ? "" : paths.error().message));
  return *paths;
}

}  // namespace

TEST_CASE("library links are followed through alternatives, /opt and relative climbs") {
  TempDir t;
  const std::string r = t / "rootfs";
  write_file(r + kMultiarchDir + "/blas/libblas.so.3", "elf");
  make_symlink("/etc/alternatives/libblas.so.3-x86_64-linux-gnu",
               r + kMultiarchDir + "/libblas.so.3");
  make_symlink(kMultiarchDir + "/blas/libblas.so.3",
               r + "/etc/alternatives/libblas.so.3-x86_64-linux-gnu");
  make_symlink("../../../opt/foo/lib/libfoo.so.1", r + kMultiarchDir + "/libfoo.so.1");
  make_symlink("/srv/volume/libbar.so.2",
               r + kMultiarchDir + "/libbar.so.2");  // dangling until mounted
  make_symlink("libz.so.1.2.13", r + kMultiarchDir + "/libz.so.1");
  write_file(r + kMultiarchDir + "/libz.so.1.2.13", "elf");
  make_symlink("/etc/elsewhere", r + kMultiarchDir + "/README");  // not a name ldconfig looks at
  make_symlink("libloop-b.so", r + kMultiarchDir + "/libloop-a.so");
  make_symlink("libloop-a.so", r + kMultiarchDir + "/libloop-b.so");
  make_dirs(r + "/lib");
  make_symlink("/opt/legacy/libold.so.1", r + "/lib/libold.so.1");
  make_dirs(r + "/opt/legacy");

  const auto paths = paths_from(r, {kMultiarchDir, "/lib", "/usr/local/lib"});
  const std::vector<std::string> expected{
      "/etc/alternatives/libblas.so.3-x86_64-linux-gnu",
      "/opt/foo/lib/libfoo.so.1",
      "/opt/legacy/libold.so.1",
      "/srv/volume/libbar.so.2",
      kMultiarchDir + "/blas/libblas.so.3",
      kMultiarchDir + "/libloop-a.so",
      kMultiarchDir + "/libloop-b.so",
      kMultiarchDir + "/libz.so.1.2.13",
  };
  CHECK(paths == expected);
}

TEST_CASE("library link paths are named as resolved in the root, never on the host") {
  TempDir t;
  const std::string r = t / "rootfs";
  write_file(t / "outside/libx.so.1", "host");
  make_dirs(r + "/usr/lib");
  make_dirs(r + "/usr/local/cuda-12.2/lib64");
  make_symlink("cuda-12.2", r + "/usr/local/cuda");
  make_symlink("/usr/local/cuda/lib64/libcudart.so.12.2", r + "/usr/lib/libcudart.so.12");
  make_symlink(t / "outside/libx.so.1", r + "/usr/lib/libx.so.1");  // the host's path, in-root
  make_symlink("../../../../../../../../.." + t / "outside", r + "/usr/lib/libclimb.so.1");

  const auto paths = paths_from(r, {"/usr/lib"});
  const std::vector<std::string> expected{
      t / "outside",  // a climb stops at the root's top
      t / "outside/libx.so.1",
      "/usr/local/cuda-12.2/lib64/libcudart.so.12.2",
  };
  CHECK(paths == expected);
}

TEST_CASE("a dangling directory link on a chain is an error: a mount could make it lead on") {
  TempDir t;
  const std::string r = t / "rootfs";
  make_dirs(r + "/usr/lib");
  make_symlink("/mnt/driver", r + "/opt/nv");
  make_symlink("/opt/nv/libnv.so.1", r + "/usr/lib/libnv.so.1");
  auto root = gcr::RootFs::open(r);
  REQUIRE(root.ok());
  gcr::ImageBudget budget;
  gcr::ResolvedDirs known;
  const auto paths = gcr::library_link_paths(*root, {"/usr/lib"}, budget, known);
  REQUIRE_FALSE(paths.ok());
  CHECK(paths.error().message.find("dangling symlink") != std::string::npos);
}
