// NVIDIA 1.20's update-application-profile: the mask of the container's GPUs, read from the spec
// as runc will make the nodes, and the profile written inside the rootfs, never outside it.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include "hooks/app_profile.h"
#include "test_support.h"

using gcr::Json;

namespace {

Json node_json(const std::string& path, unsigned minor, const std::string& type = "c") {
  return {{"path", path}, {"type", type}, {"major", 195}, {"minor", minor}};
}

Json spec_with_devices(const Json& devices) {
  return {{"linux", {{"devices", devices}}}};
}

const std::string kProfile = "/etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf";

gcr::RootFs open_root(const std::string& path) {
  auto root = gcr::RootFs::open(path);
  REQUIRE(root.ok());
  return std::move(*root);
}

}  // namespace

TEST_CASE("the mask has the bit of each GPU node's minor, and only GPU nodes count") {
  const Json devices = {node_json("/dev/nvidia3", 3),
                        node_json("/dev/nvidia0", 0),
                        node_json("/dev/nvidia63", 63),
                        node_json("/dev/nvidiactl", 255),
                        node_json("/dev/nvidia-uvm", 1),
                        node_json("/dev/nvidia-modeset", 254),
                        node_json("/dev/nvidia-caps/nvidia-cap1", 1),
                        node_json("/dev/nvidia5", 5, "b"),
                        node_json("/dev/nvidia64", 64),
                        node_json("/dev/nvidia", 7),
                        node_json("/dev/nvidia1x", 1),
                        node_json("/dev/dri/card1", 1)};
  CHECK(gcr::visible_gpu_mask(spec_with_devices(devices)) == 0x8000000000000009u);
}

TEST_CASE("a minor read as a signed number counts as one read as unsigned") {
  Json signed_minor = node_json("/dev/nvidia2", 0);
  signed_minor["minor"] = std::int64_t{2};
  REQUIRE(signed_minor["minor"].is_number_integer());
  REQUIRE_FALSE(signed_minor["minor"].is_number_unsigned());
  CHECK(gcr::visible_gpu_mask(spec_with_devices(Json::array({signed_minor}))) == 0x4);
}

TEST_CASE("the minor is what counts, not the number in the node's name") {
  // The simulated host's GPU 1 is minor 0; a node may be renamed in the container.
  CHECK(gcr::visible_gpu_mask(spec_with_devices(Json::array({node_json("/dev/nvidia1", 0)}))) ==
        0x1);
  CHECK(gcr::visible_gpu_mask(spec_with_devices(Json::array({node_json("/dev/nvidia0", 6)}))) ==
        0x40);
}

TEST_CASE("a spec without GPU nodes, or of another shape, has an empty mask") {
  CHECK(gcr::visible_gpu_mask(Json::object()) == 0);
  CHECK(gcr::visible_gpu_mask(Json::array()) == 0);
  CHECK(gcr::visible_gpu_mask({{"linux", {{"devices", "x"}}}}) == 0);
  CHECK(gcr::visible_gpu_mask(
            spec_with_devices({1,
                               "x",
                               Json::object(),
                               {{"path", "/dev/nvidia0"}, {"type", "c"}},
                               {{"path", "/dev/nvidia0"}, {"minor", 0}},
                               {{"path", "/dev/nvidia0"}, {"type", "c"}, {"minor", -1}},
                               {{"path", 0}, {"type", "c"}, {"minor", 0}}})) == 0);
}

TEST_CASE("the profile is NVIDIA's: EGLVisibleDGPUDevices for every application") {
  CHECK(gcr::app_profile_text(0x9) ==
        "{\"profiles\": [{\"name\": \"_container_\", \"settings\": [\"EGLVisibleDGPUDevices\", "
        "0x9]}], \"rules\": [{\"pattern\": [], \"profile\": \"_container_\"}]}\n");
  CHECK(gcr::app_profile_text(0x8000000000000000u).find(", 0x8000000000000000]") !=
        std::string::npos);
}

TEST_CASE("the profile is written in the rootfs, its folders made, and left alone when current") {
  gcr::test::TempDir dir;
  const std::string root = dir / "rootfs";
  gcr::test::make_dirs(root + "/etc");
  const auto opened = open_root(root);
  REQUIRE(gcr::write_app_profile(opened, 0x9).ok());
  CHECK(gcr::test::read_file(root + kProfile) == gcr::app_profile_text(0x9));
  struct stat before {};
  REQUIRE(::stat((root + kProfile).c_str(), &before) == 0);
  CHECK((before.st_mode & 07777) == 0644);
  REQUIRE(gcr::write_app_profile(opened, 0x9).ok());
  struct stat again {};
  REQUIRE(::stat((root + kProfile).c_str(), &again) == 0);
  CHECK(again.st_ino == before.st_ino);
  REQUIRE(gcr::write_app_profile(opened, 0x2).ok());
  CHECK(gcr::test::read_file(root + kProfile) == gcr::app_profile_text(0x2));
}

TEST_CASE("no GPU: no profile") {
  gcr::test::TempDir dir;
  const std::string root = dir / "rootfs";
  gcr::test::make_dirs(root);
  REQUIRE(gcr::write_app_profile(open_root(root), 0).ok());
  CHECK_FALSE(gcr::test::exists(root + "/etc"));
}

TEST_CASE("an image's symlinks lead the profile to a place inside the rootfs, never the host") {
  gcr::test::TempDir dir;
  const std::string root = dir / "rootfs";
  const std::string outside = dir / "host-etc";
  gcr::test::make_dirs(root + "/etc");
  gcr::test::make_dirs(outside);
  gcr::test::make_symlink(outside, root + "/etc/nvidia");
  REQUIRE(gcr::write_app_profile(open_root(root), 0x1).ok());
  CHECK_FALSE(gcr::test::exists(outside + "/nvidia-application-profiles-rc.d"));
  CHECK(gcr::test::read_file(root + outside +
                             "/nvidia-application-profiles-rc.d/10-container.conf") ==
        gcr::app_profile_text(0x1));
}

TEST_CASE("a file where the profile's folder goes is an error naming the profile") {
  gcr::test::TempDir dir;
  const std::string root = dir / "rootfs";
  gcr::test::write_file(root + "/etc/nvidia", "not a folder");
  const auto written = gcr::write_app_profile(open_root(root), 0x1);
  REQUIRE_FALSE(written.ok());
  CHECK(written.error().message.find("cannot write " + kProfile) == 0);
}

TEST_CASE("a FIFO or a link an image planted at the profile's name is replaced, never followed") {
  gcr::test::TempDir dir;
  const std::string root = dir / "rootfs";
  const std::string folder = root + "/etc/nvidia/nvidia-application-profiles-rc.d";
  gcr::test::make_dirs(folder);
  REQUIRE(::mkfifo((folder + "/10-container.conf").c_str(), 0644) == 0);
  REQUIRE(gcr::write_app_profile(open_root(root), 0x1).ok());
  CHECK(gcr::test::read_file(root + kProfile) == gcr::app_profile_text(0x1));
  REQUIRE(::unlink((root + kProfile).c_str()) == 0);
  gcr::test::make_symlink("/etc/elsewhere.conf", folder + "/10-container.conf");
  REQUIRE(gcr::write_app_profile(open_root(root), 0x2).ok());
  CHECK(gcr::test::read_file(root + kProfile) == gcr::app_profile_text(0x2));
  CHECK_FALSE(gcr::test::exists(root + "/etc/elsewhere.conf"));
}
