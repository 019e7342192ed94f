// NVIDIA 1.20's update-application-profile: a graphics container's EGL sees only its own GPUs,
// through /etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf. The shim writes it at
// create (real runc behind it, the file read inside the container), together with the loader
// cache; where a mount lands on the profile, above or below it, there is none, and nothing is
// written into a volume; where the shim cannot write as the hook would (a user namespace), the
// hook does it in the container. NVIDIA's CDI specs run it as nvidia-cdi-hook. The simulated
// host's GPUs 0 to 3 are minors 3, 0, 4 and 1. Needs root.
#include <doctest/doctest.h>

#include <boost/filesystem.hpp>

#include "cdi_fixture.h"
#include "gpu_fixture.h"

using gcr::Json;
using gcr::test::GpuFixture;

namespace {

constexpr const char* kProfile = "/etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf";

std::string profile_of(const std::string& mask) {
  return "{\"profiles\": [{\"name\": \"_container_\", \"settings\": [\"EGLVisibleDGPUDevices\", " +
         mask + "]}], \"rules\": [{\"pattern\": [], \"profile\": \"_container_\"}]}\n";
}

// A graphics request for GPU 0 with `patch` merged into its spec, created through the shim and
// the recording fake runc, on a busybox rootfs made before.
gcr::test::ProcessResult create_graphics(const GpuFixture& f, const Json& patch) {
  return f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=graphics"}, patch);
}

Json mounts_with(const Json& mount) {
  return {{"mounts", {{{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}}, mount}}};
}

bool has_hook(const GpuFixture& f, const std::string& name) {
  const auto names = f.hook_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

TEST_CASE("a graphics container's EGL sees its GPUs only: the profile written at create") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  GpuFixture f;
  f.use_real_runc();
  const std::string show = std::string("cat ") + kProfile;
  const auto two = f.run_busybox(
      {"NVIDIA_VISIBLE_DEVICES=0,2", "NVIDIA_DRIVER_CAPABILITIES=graphics,compute"}, show);
  CHECK(two.err == "");
  CHECK(two.out == profile_of("0x18"));
  CHECK_FALSE(has_hook(f, "update-application-profile"));
  CHECK_FALSE(has_hook(f, "update-libraries"));  // the loader cache written at create too
  // Started again with another GPU (a fresh spec, the same rootfs): the file says so.
  const auto one =
      f.run_busybox({"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=all"}, show);
  CHECK(one.err == "");
  CHECK(one.out == profile_of("0x1"));
}

TEST_CASE("no graphics, no profile; no GPU, no profile") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  GpuFixture f;
  f.use_real_runc();
  const std::string look = "ls /etc/nvidia 2>&1; true";
  const auto compute = f.run_busybox({"NVIDIA_VISIBLE_DEVICES=0"}, look);
  CHECK(compute.out.find("No such file") != std::string::npos);
  CHECK_FALSE(has_hook(f, "update-application-profile"));
  const auto none =
      f.run_busybox({"NVIDIA_VISIBLE_DEVICES=none", "NVIDIA_DRIVER_CAPABILITIES=graphics"}, look);
  CHECK(none.err == "");
  CHECK(none.out.find("No such file") != std::string::npos);
}

TEST_CASE("a volume at /etc/nvidia: no profile, nothing written into the volume, no hook") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  GpuFixture f;
  f.use_real_runc();
  const std::string volume = f.path("volume");
  gcr::test::make_dirs(volume);
  gcr::test::make_dirs(f.bundle() + "/rootfs/etc/nvidia");
  const auto r = f.run_busybox({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=graphics"},
                               "ls -A /etc/nvidia; echo ok",
                               mounts_with({{"destination", "/etc/nvidia"},
                                            {"type", "bind"},
                                            {"source", volume},
                                            {"options", {"rbind", "rw"}}}));
  CHECK(r.out == "ok\n");
  CHECK_FALSE(has_hook(f, "update-application-profile"));
  CHECK_FALSE(gcr::test::exists(volume + "/nvidia-application-profiles-rc.d"));
  CHECK_FALSE(gcr::test::exists(f.bundle() + "/rootfs" + kProfile));
}

TEST_CASE("a mount the image's symlinks lead to the profile's folder, or one below the profile") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod)");
  GpuFixture f;
  gcr::test::make_busybox_rootfs(f.bundle());
  gcr::test::make_dirs(f.bundle() + "/rootfs/opt/profiles");
  gcr::test::make_dirs(f.bundle() + "/rootfs/etc");
  gcr::test::make_symlink("/opt", f.bundle() + "/rootfs/etc/nvidia");
  // /etc/nvidia/nvidia-application-profiles-rc.d is /opt/nvidia-application-profiles-rc.d.
  const auto linked =
      create_graphics(f, mounts_with({{"destination", "/opt/nvidia-application-profiles-rc.d"},
                                      {"type", "tmpfs"},
                                      {"source", "tmpfs"}}));
  REQUIRE_MESSAGE(linked.exit_code == 0, linked.err);
  CHECK_FALSE(has_hook(f, "update-application-profile"));
  CHECK_FALSE(gcr::test::exists(f.bundle() + "/rootfs/opt/nvidia-application-profiles-rc.d"));

  GpuFixture g;
  gcr::test::make_busybox_rootfs(g.bundle());
  const auto below = create_graphics(g, mounts_with({{"destination", std::string(kProfile) + "/x"},
                                                     {"type", "tmpfs"},
                                                     {"source", "tmpfs"}}));
  REQUIRE_MESSAGE(below.exit_code == 0, below.err);
  CHECK_FALSE(has_hook(g, "update-application-profile"));
  // runc makes the folders down to the mount; no file stands in its way.
  CHECK_FALSE(gcr::test::exists(g.bundle() + "/rootfs" + kProfile));
}

TEST_CASE("a user namespace: the profile is left to the hook, as the container's root") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod)");
  GpuFixture f;
  gcr::test::make_busybox_rootfs(f.bundle());
  const auto r =
      create_graphics(f, {{"linux", {{"namespaces", {{{"type", "mount"}}, {{"type", "user"}}}}}}});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(has_hook(f, "update-application-profile"));
  CHECK_FALSE(gcr::test::exists(f.bundle() + "/rootfs/etc/nvidia"));
  // Without a GPU there is nothing to write, and no hook.
  GpuFixture g;
  gcr::test::make_busybox_rootfs(g.bundle());
  const auto none =
      g.create({"NVIDIA_VISIBLE_DEVICES=none", "NVIDIA_DRIVER_CAPABILITIES=graphics"},
               {{"linux", {{"namespaces", {{{"type", "mount"}}, {{"type", "user"}}}}}}});
  REQUIRE_MESSAGE(none.exit_code == 0, none.err);
  CHECK_FALSE(has_hook(g, "update-application-profile"));
}

TEST_CASE("a CDI device's profile: the generated spec's hook, done at create") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod)");
  gcr::test::CdiFixture f;
  gcr::test::make_busybox_rootfs(f.bundle());
  const auto r = f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=2"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(gcr::test::read_file(f.bundle() + "/rootfs" + kProfile) == profile_of("0x10"));
  CHECK_FALSE(has_hook(f, "update-application-profile"));
}

TEST_CASE("as nvidia-cdi-hook, NVIDIA's specs' hook: the profile of the bundle spec's GPUs") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod)");
  GpuFixture f;
  gcr::test::make_busybox_rootfs(f.bundle());
  Json spec = gcr::test::busybox_spec({"/bin/true"});
  spec["linux"]["devices"] = {
      {{"path", "/dev/nvidia5"}, {"type", "c"}, {"major", 195}, {"minor", 5}},
      {{"path", "/dev/nvidia7"}, {"type", "c"}, {"major", 195}, {"minor", 7}},
      {{"path", "/dev/nvidiactl"}, {"type", "c"}, {"major", 195}, {"minor", 255}}};
  f.write_spec(spec.dump(2));
  const std::string program = f.path("bin/nvidia-cdi-hook");
  gcr::test::make_dirs(f.path("bin"));
  gcr::test::make_symlink(gcr::test::built("gpu-ctk"), program);
  gcr::test::RunOptions state;
  state.stdin_text =
      Json{{"ociVersion", "1.0.2"}, {"id", "x"}, {"status", "creating"}, {"bundle", f.bundle()}}
          .dump();
  const auto hook = gcr::test::run({program, "update-application-profile"}, state);
  CHECK(hook.exit_code == 0);
  CHECK(hook.err == "");
  CHECK(gcr::test::read_file(f.bundle() + "/rootfs" + kProfile) == profile_of("0xa0"));
  // A file where the profile's folder goes: said, and the container still starts.
  boost::filesystem::remove_all(f.bundle() + "/rootfs/etc/nvidia");
  gcr::test::write_file(f.bundle() + "/rootfs/etc/nvidia", "");
  const auto blocked = gcr::test::run({program, "update-application-profile"}, state);
  CHECK(blocked.exit_code == 0);
  CHECK(blocked.err.find("application profile: nothing done: cannot write") != std::string::npos);
}
