// [device-plugin] mps-root judged as the configuration file is (issue 41): an mps-root another
// user could prepare (under a directory anyone can write, as /tmp) is refused with one line by
// gpu-device-plugin, whose MPS shares stay Unhealthy with no daemon started and nothing done
// through the symlinks planted there, and by gpu-ctk config check. Needs root.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "plugin_fixture.h"

using gcr::Json;
using gcr::test::Devices;
using gcr::test::PluginFixture;
using namespace std::chrono_literals;

namespace {

constexpr uid_t kNobody = 65534;

mode_t mode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

bool all_unhealthy(const Devices& devices) {
  return !devices.empty() && std::all_of(devices.begin(), devices.end(),
                                         [](const auto& d) { return d.health() == "Unhealthy"; });
}

}  // namespace

TEST_CASE("mps-root another user prepared: refused with one line, nothing done through it") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod, chown)");
  PluginFixture f(Json{{"sharing", "mps"}, {"replicas", 4}});
  // ww is 1777, as /tmp is. Another user made mps-root there before the plugin started, with
  // the one-share daemon's pipe/ and shm/ as symlinks to root's directories.
  const std::string open = f.dir / "ww";
  const std::string root = open + "/mps";
  const std::string share = root + "/nvidia.com-gpu/1-of-4";
  gcr::test::make_dirs(share);
  REQUIRE(::chmod(open.c_str(), 01777) == 0);
  gcr::test::write_file(f.dir / "victim/keep", "root's\n");
  gcr::test::make_dirs(f.dir / "victim-mode");
  REQUIRE(::chmod((f.dir / "victim-mode").c_str(), 0700) == 0);
  gcr::test::make_symlink(f.dir / "victim", share + "/pipe");
  gcr::test::make_symlink(f.dir / "victim-mode", share + "/shm");
  for (const auto& path :
       {root, root + "/nvidia.com-gpu", share, share + "/pipe", share + "/shm"}) {
    REQUIRE(::lchown(path.c_str(), kNobody, kNobody) == 0);
  }
  Json config = gcr::parse_json_strict(gcr::test::read_file(f.dir / "config.json")).value();
  config["device-plugin"]["mps-root"] = root;
  gcr::test::write_file(f.dir / "config.json", config.dump(2));

  f.start();
  const std::string line = "`device-plugin.mps-root` refused: not owned by root (" + root + ")";
  CHECK_MESSAGE(f.logged(line + "; every MPS share is Unhealthy until it is fixed"), f.log());
  REQUIRE_MESSAGE(f.kubelet->wait_for_devices(all_unhealthy, 15s), f.log());
  // Allocate says why (the reason published right after the line is logged).
  std::string refused;
  for (int i = 0; i < 50 && refused.find(line) == std::string::npos; ++i) {
    v1beta1::AllocateResponse response;
    refused = f.kubelet->allocate({f.kubelet->devices().front().id()}, response).error_message();
    if (refused.find(line) == std::string::npos) std::this_thread::sleep_for(100ms);
  }
  CHECK_MESSAGE(refused.find(line) != std::string::npos, refused);
  // No daemon, and nothing done through the symlinks: root's file kept, its directory's mode.
  CHECK(f.log().find("MPS control daemon serving") == std::string::npos);
  CHECK(gcr::test::read_file(f.dir / "victim/keep") == "root's\n");
  CHECK(mode_of(f.dir / "victim-mode") == 0700);
  CHECK(f.plugin->stop() == 0);
  CHECK(gcr::test::read_file(f.dir / "victim/keep") == "root's\n");

  // gpu-ctk config check names mps-root; with nothing planted, the sticky directory itself is
  // refused: anyone could make mps-root there first.
  const std::string file = f.dir / "config.json";
  const auto planted = gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", file});
  CHECK(planted.exit_code == 1);
  CHECK(planted.err == "gpu-ctk: config: " + file + ": " + line + "\n");
  std::filesystem::remove_all(root);
  const auto missing = gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", file});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err == "gpu-ctk: config: " + file +
                           ": `device-plugin.mps-root` refused: writable by group or others (" +
                           open + ")\n");
  // A directory only root can write: fine, mps-root made there by the plugin.
  REQUIRE(::chmod(open.c_str(), 0755) == 0);
  const auto fixed = gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", file});
  CHECK(fixed.exit_code == 0);
  CHECK(fixed.out == file + ": ok\n");
}
