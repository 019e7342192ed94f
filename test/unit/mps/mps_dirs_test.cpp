// The MPS daemons' directories under [device-plugin] mps-root (issue 41): mps-root judged as the
// configuration file is, a sticky directory not enough where ours are made; below it each
// directory made or opened without following a symlink, and nothing done through a planted one.
// Runs as any user: the checks trust the test's own user as they trust root.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "mps/mps_daemon.h"
#include "test_support.h"

using gcr::test::TempDir;

namespace {

void make_dir(const std::string& path, mode_t mode) {
  gcr::test::make_dirs(path);
  REQUIRE(::chmod(path.c_str(), mode) == 0);
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

gcr::MpsPlan plan_in(const std::string& root) {
  gcr::MpsPlan plan;
  plan.root = root;
  plan.dir = gcr::mps_dir(root, "nvidia.com/gpu", 4, 1);
  return plan;
}

std::string root_refusal(const std::string& root) {
  auto s = gcr::check_mps_root(root, ::geteuid());
  REQUIRE_FALSE(s.ok());
  return s.error().message;
}

std::string dirs_refusal(const gcr::MpsPlan& plan) {
  auto made = gcr::make_mps_dirs(plan, ::geteuid());
  REQUIRE_FALSE(made.ok());
  return made.error().message;
}

}  // namespace

TEST_CASE("mps-root: only root can change it, a sticky directory not enough where it is made") {
  TempDir dir;
  CHECK(gcr::check_mps_root(dir / "mps", ::geteuid()).ok());
  CHECK(gcr::check_mps_root(dir / "a/b/mps", ::geteuid()).ok());
  // /tmp/ww (1777): anyone could make mps-root there first, with symlinks in it.
  make_dir(dir / "ww", 01777);
  const std::string sticky =
      "`device-plugin.mps-root` refused: writable by group or others (" + dir / "ww" + ")";
  CHECK(root_refusal(dir / "ww/mps") == sticky);
  CHECK(root_refusal(dir / "ww") == sticky);
  CHECK(dirs_refusal(plan_in(dir / "ww/mps")) == sticky);
  CHECK_FALSE(gcr::test::exists(dir / "ww/mps"));
  // Made there by root before: nobody else can replace it.
  make_dir(dir / "ww/mps", 0755);
  CHECK(gcr::check_mps_root(dir / "ww/mps", ::geteuid()).ok());
  make_dir(dir / "group", 0775);
  CHECK(root_refusal(dir / "group/mps") ==
        "`device-plugin.mps-root` refused: writable by group or others (" + dir / "group" + ")");
  CHECK(root_refusal("run/mps") ==
        "`device-plugin.mps-root` refused: not an absolute path (run/mps)");
  if (gcr::test::is_root()) {
    make_dir(dir / "theirs", 0755);
    REQUIRE(::chown((dir / "theirs").c_str(), 65534, 65534) == 0);
    CHECK(gcr::check_mps_root(dir / "theirs/mps").error().message ==
          "`device-plugin.mps-root` refused: not owned by root (" + dir / "theirs" + ")");
  }
}

TEST_CASE("the daemon's directories: made below mps-root, shm/ open to all, pipe/ given open") {
  TempDir dir;
  const auto plan = plan_in(dir / "mps/");
  CHECK(plan.dir == dir / "mps/nvidia.com-gpu/1-of-4");
  auto pipe = gcr::make_mps_dirs(plan, ::geteuid());
  REQUIRE_MESSAGE(pipe.ok(), (pipe.ok() ? std::string() : pipe.error().message));
  for (const auto& path :
       {dir / "mps", dir / "mps/nvidia.com-gpu", plan.dir, plan.log_dir(), plan.pipe_dir()}) {
    CAPTURE(path);
    CHECK((mode_of(path) & 07022) == 0);
  }
  CHECK(mode_of(plan.shm_dir()) == 01777);
  struct stat by_fd {};
  struct stat by_name {};
  REQUIRE(::fstat(pipe->get(), &by_fd) == 0);
  REQUIRE(::stat(plan.pipe_dir().c_str(), &by_name) == 0);
  CHECK(by_fd.st_ino == by_name.st_ino);
  // Again, as a restarted plugin does: the same directories.
  CHECK(gcr::make_mps_dirs(plan, ::geteuid()).ok());
}

TEST_CASE("driver/bin and driver/lib hold the plan's links and nothing else, each replaced") {
  TempDir dir;
  auto plan = plan_in(dir / "mps");
  plan.driver = {{false, "nvidia-cuda-mps-server", "/drv/usr/bin/nvidia-cuda-mps-server"},
                 {true, "libcuda.so.1", "/drv/usr/lib/libcuda.so.580.159.04"}};
  REQUIRE(gcr::make_mps_dirs(plan, ::geteuid()).ok());
  for (const auto& path : {plan.dir + "/driver", plan.bin_dir(), plan.lib_dir()}) {
    CAPTURE(path);
    CHECK((mode_of(path) & 07022) == 0);
  }
  CHECK(std::filesystem::read_symlink(plan.bin_dir() + "/nvidia-cuda-mps-server") ==
        "/drv/usr/bin/nvidia-cuda-mps-server");
  CHECK(std::filesystem::read_symlink(plan.lib_dir() + "/libcuda.so.1") ==
        "/drv/usr/lib/libcuda.so.580.159.04");
  // A driver upgraded: the new file's link replaces the old; a library it no longer has and
  // anything else put there are removed.
  gcr::test::write_file(plan.lib_dir() + "/libplanted.so.1", "x");
  plan.driver = {{false, "nvidia-cuda-mps-server", "/drv/usr/bin/nvidia-cuda-mps-server"},
                 {true, "libcuda.so.1", "/drv/usr/lib/libcuda.so.580.200.01"}};
  REQUIRE(gcr::make_mps_dirs(plan, ::geteuid()).ok());
  CHECK(std::filesystem::read_symlink(plan.lib_dir() + "/libcuda.so.1") ==
        "/drv/usr/lib/libcuda.so.580.200.01");
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(plan.lib_dir()))
    names.push_back(e.path().filename());
  CHECK(names == std::vector<std::string>{"libcuda.so.1"});
  // A symlink planted for driver/, driver/bin or driver/lib is refused, never followed.
  for (const auto& dir : {plan.bin_dir(), plan.lib_dir()}) {
    std::filesystem::remove_all(dir);
    make_dir(dir + ".victim", 0700);
    gcr::test::make_symlink(dir + ".victim", dir);
    CHECK(dirs_refusal(plan) == "MPS directory refused: a symlink, never followed (" + dir + ")");
    CHECK(std::filesystem::is_empty(dir + ".victim"));
    REQUIRE(::unlink(dir.c_str()) == 0);
  }
  std::filesystem::remove_all(plan.dir + "/driver");
  make_dir(dir / "victim", 0700);
  gcr::test::make_symlink(dir / "victim", plan.dir + "/driver");
  CHECK(dirs_refusal(plan) ==
        "MPS directory refused: a symlink, never followed (" + plan.dir + "/driver)");
  CHECK(std::filesystem::is_empty(dir / "victim"));
}

TEST_CASE("symlinks planted under mps-root are refused, never followed: their targets untouched") {
  TempDir dir;
  const auto plan = plan_in(dir / "mps");
  for (const auto& path : {dir / "mps", dir / "mps/nvidia.com-gpu", plan.dir}) make_dir(path, 0755);
  make_dir(dir / "victim", 0700);
  gcr::test::write_file(dir / "victim/keep", "x");

  gcr::test::make_symlink(dir / "victim", plan.shm_dir());
  CHECK(dirs_refusal(plan) ==
        "MPS directory refused: a symlink, never followed (" + plan.shm_dir() + ")");
  CHECK(mode_of(dir / "victim") == 0700);  // not opened to all

  REQUIRE(::unlink(plan.shm_dir().c_str()) == 0);
  gcr::test::make_symlink(dir / "victim", plan.pipe_dir());
  CHECK(dirs_refusal(plan) ==
        "MPS directory refused: a symlink, never followed (" + plan.pipe_dir() + ")");
  CHECK(gcr::test::exists(dir / "victim/keep"));  // not emptied

  // The resource's directory swapped for a symlink, or one others can write.
  std::filesystem::remove_all(dir / "mps/nvidia.com-gpu");
  gcr::test::make_symlink(dir / "victim", dir / "mps/nvidia.com-gpu");
  CHECK(dirs_refusal(plan) ==
        "MPS directory refused: a symlink, never followed (" + dir / "mps/nvidia.com-gpu" + ")");
  CHECK_FALSE(gcr::test::exists(dir / "victim/1-of-4"));
  REQUIRE(::unlink((dir / "mps/nvidia.com-gpu").c_str()) == 0);
  make_dir(dir / "mps/nvidia.com-gpu", 0777);
  CHECK(dirs_refusal(plan) ==
        "MPS directory refused: writable by group or others (" + dir / "mps/nvidia.com-gpu" + ")");
  CHECK_FALSE(gcr::test::exists(plan.dir));
  // mps-root itself opened to others since it was made.
  REQUIRE(::chmod((dir / "mps").c_str(), 0777) == 0);
  CHECK(dirs_refusal(plan) ==
        "`device-plugin.mps-root` refused: writable by group or others (" + dir / "mps" + ")");
}
