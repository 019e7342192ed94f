// The discovery cache (issue 44) through the built shim on the simulated host: a create uses what
// the one before it found and writes the same spec, and what was kept is not used once a file
// or folder it was found from changes, so that a library made writable by others is refused
// again and a library removed is not mounted. Needs root.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "gpu_fixture.h"

using gcr::Json;
using gcr::test::LoggedFixture;

namespace {

using gcr::test::kLib;
using gcr::test::kVersion;

// A simulated host whose shim keeps its discovery cache in the fixture, and whose driver files
// are older than the 2 s the cache wants (they were just made).
struct CachedFixture : LoggedFixture {
  CachedFixture() {
    configure({{"runtime", {{"state-dir", path("state")}}}});
    ::sleep(3);
  }
  // Creates a 1-GPU container and returns the debug lines about the cache this create logged.
  std::vector<std::string> create_gpu() {
    const auto before = logged("debug").size();
    const auto r = create({"NVIDIA_VISIBLE_DEVICES=0"});
    CHECK(r.err == "");
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> lines;
    const auto debug = logged("debug");
    for (auto i = before; i < debug.size(); ++i) {
      if (debug[i].find("discovery cache") != std::string::npos) lines.push_back(debug[i]);
    }
    return lines;
  }
  [[nodiscard]] bool mounted(const std::string& destination) const {
    const auto mounts = mount_destinations();
    return std::find(mounts.begin(), mounts.end(), destination) != mounts.end();
  }
};

bool starts(const std::vector<std::string>& lines, std::size_t i, const std::string& prefix) {
  return i < lines.size() && lines[i].starts_with(prefix);
}

}  // namespace

TEST_CASE("discovery cache: kept by one create, used by the next, the same spec written") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod, chown)");
  CachedFixture f;
  auto lines = f.create_gpu();
  CHECK(starts(lines, 0, "discovery cache not used: nothing kept yet"));
  CHECK(starts(lines, 1, "driver files kept in the discovery cache with "));
  const Json found = f.spec();
  lines = f.create_gpu();
  CHECK(lines == std::vector<std::string>{"driver files from the discovery cache (" +
                                          f.path("state") + "/discovery)"});
  CHECK(f.spec() == found);
  CHECK(f.mounted(kLib + "libcuda.so." + kVersion));
  // Each library's soname is kept with it (the loader-cache step does not read the file again):
  // a soname is written as "2," (read, with a soname), then the text "<length>:<soname>".
  std::string kept;
  for (const auto& e : std::filesystem::directory_iterator(f.path("state/discovery")))
    kept += gcr::test::read_file(e.path().string());
  CHECK(kept.find("2,12:libcuda.so.1") != std::string::npos);
  CHECK(kept.find("2,17:libnvidia-ml.so.1") != std::string::npos);
  // The file is the shim's alone.
  struct stat st {};
  REQUIRE(::stat(f.path("state/discovery").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
}

TEST_CASE("discovery cache: not used once a driver file or its folder changed") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod, chown)");
  CachedFixture f;
  const std::string ml = f.host().driver_root() + kLib + "libnvidia-ml.so." + kVersion;
  (void)f.create_gpu();
  REQUIRE(starts(f.create_gpu(), 0, "driver files from the discovery cache"));
  REQUIRE(f.mounted(kLib + "libnvidia-ml.so." + kVersion));

  SUBCASE("a library made writable by its group is refused again") {
    REQUIRE(::chmod(ml.c_str(), 0664) == 0);
    const auto lines = f.create_gpu();
    CHECK(starts(lines, 0, "discovery cache not used: changed since it was kept: " + ml));
    CHECK(f.warned("writable by group or others (" + ml + ")"));
    CHECK_FALSE(f.mounted(kLib + "libnvidia-ml.so." + kVersion));
  }
  SUBCASE("a library removed is not mounted") {
    REQUIRE(::unlink(ml.c_str()) == 0);
    const auto lines = f.create_gpu();
    CHECK(starts(lines, 0,
                 "discovery cache not used: changed since it was kept: " + f.host().driver_root() +
                     "/usr/lib/x86_64-linux-gnu"));
    CHECK_FALSE(f.mounted(kLib + "libnvidia-ml.so." + kVersion));
    CHECK(f.mounted(kLib + "libcuda.so." + kVersion));
  }
}

TEST_CASE("discovery cache: off where nothing can be kept, and the create is as without it") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod, chown)");
  LoggedFixture f;
  gcr::test::make_dirs(f.path("open"));
  REQUIRE(::chmod(f.path("open").c_str(), 0777) == 0);
  f.configure({{"runtime", {{"state-dir", f.path("open/state")}}}});
  const auto r = f.create({"NVIDIA_VISIBLE_DEVICES=0"});
  CHECK(r.err == "");
  REQUIRE(r.exit_code == 0);
  const auto debug = f.logged("debug");
  CHECK(std::find(debug.begin(), debug.end(),
                  "driver files not kept in the discovery cache: writable by group or others (" +
                      f.path("open") + ")") != debug.end());
  CHECK_FALSE(gcr::test::exists(f.path("open/state")));
  const auto mounts = f.mount_destinations();
  CHECK(std::find(mounts.begin(), mounts.end(), kLib + "libcuda.so." + kVersion) != mounts.end());
}

TEST_CASE("discovery cache: a GPU's information kept while its /proc file is the one read") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod, chown)");
  CachedFixture f;
  const auto& gpus = f.host().gpus();
  const std::string info =
      f.host().dev_root() + "/proc/driver/nvidia/gpus/" + gpus.at(0).bus + "/information";
  (void)f.create_gpu();
  std::string kept;
  for (const auto& e : std::filesystem::directory_iterator(f.path("state/discovery")))
    kept += gcr::test::read_file(e.path().string());
  CHECK(kept.find("proc file " + info) != std::string::npos);
  CHECK(kept.find("proc file " + f.host().dev_root() + "/proc/driver/nvidia/version") !=
        std::string::npos);
  CHECK(f.devices().count("/dev/nvidia" + std::to_string(gpus[0].minor)) == 1);
  // The driver made the entry again and gave GPU 0 GPU 1's minor: what was kept is not used.
  std::string text = gcr::test::read_file(info);
  const std::string minor = "Device Minor: \t " + std::to_string(gpus[0].minor) + "\n";
  REQUIRE(text.find(minor) != std::string::npos);
  text.replace(text.find(minor), minor.size(),
               "Device Minor: \t " + std::to_string(gpus.at(1).minor) + "\n");
  gcr::test::write_file(info + ".new", text);
  REQUIRE(::rename((info + ".new").c_str(), info.c_str()) == 0);
  (void)f.create_gpu();
  CHECK(f.devices().count("/dev/nvidia" + std::to_string(gpus[1].minor)) == 1);
  CHECK(f.devices().count("/dev/nvidia" + std::to_string(gpus[0].minor)) == 0);
}
