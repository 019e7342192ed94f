// NVIDIA 1.18's disable-device-node-modification: a GPU container's view of
// /proc/driver/nvidia/params says ModifyDeviceFiles: 0, so the driver's libraries inside never
// create or change device nodes. The simulated host's params live in its dev root; a
// container's real procfs has no driver/nvidia without NVIDIA's kernel module, so there the
// hook has nothing to cover and does nothing (every real container test runs it so). What it
// does is checked where the file is a regular file: in a runc container where a hook of the
// spec, run before ours, has put the host's params in the container's /proc/driver (a tmpfs
// standing in for the module's procfs directory), and on a rootfs in a private mount
// namespace. Needs root.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "gpu_fixture.h"

using gcr::Json;
using gcr::test::GpuFixture;

namespace {

constexpr const char* kParams = "/proc/driver/nvidia/params";
const std::string kHostParams =
    "ModifyDeviceFiles: 1\nDeviceFileUID: 0\nDeviceFileGID: 0\nDeviceFileMode: 438\n";
const std::string kContainerParams =
    "ModifyDeviceFiles: 0\nDeviceFileUID: 0\nDeviceFileGID: 0\nDeviceFileMode: 438\n";

// gpu-ctk hook disable-device-node-modification on `root` in a private mount namespace, then
// `after` (a shell command: "$1" is `root`) in that namespace; under no-openat2 with
// `old_kernel` (its flag) when given.
gcr::test::ProcessResult run_hook(const gcr::test::TempDir& t, const std::string& root,
                                  const std::string& after, const std::string& old_kernel = "") {
  gcr::test::write_file(t / "state.json", Json{{"ociVersion", "1.0.2"},
                                               {"id", "c"},
                                               {"status", "creating"},
                                               {"pid", 1},
                                               {"bundle", t.path()},
                                               {"root", root}}
                                              .dump());
  const std::string wrapper =
      old_kernel.empty() ? "" : "\"" + gcr::test::built("no-openat2") + "\" " + old_kernel + " ";
  const std::string hook = wrapper + "\"" + gcr::test::built("gpu-ctk") +
                           "\" hook disable-device-node-modification < \"" + t / "state.json" +
                           "\"";
  return gcr::test::run({"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                         hook + " && { " + after + "; }", "sh", root});
}

}  // namespace

TEST_SUITE("device node params") {
  TEST_CASE("in a runc container the driver's params read ModifyDeviceFiles: 0, read-only") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f;
    f.configure({{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
    gcr::test::make_glibc_rootfs(f.bundle());
    const std::string root = f.bundle() + "/rootfs";
    const std::string host_params = f.host().dev_root() + kParams;
    // Stands in for NVIDIA's kernel module: a createContainer hook of the spec, run before ours
    // in the container's mount namespace, puts the host's params where the module would.
    const std::string module = "set -e; /bin/mount -t tmpfs -o size=64k tmpfs '" + root +
                               "/proc/driver'; /bin/mkdir '" + root + "/proc/driver/nvidia'; " +
                               "/bin/cp '" + host_params + "' '" + root + kParams + "'";
    Json spec = gcr::test::busybox_spec(
        {"/bin/sh", "-c",
         "cat /proc/driver/nvidia/params; ls -a /dev | grep -c params; "
         "(echo x > /proc/driver/nvidia/params) 2>/dev/null || echo read-only"});
    spec["hooks"]["createContainer"] =
        Json::array({{{"path", "/bin/sh"}, {"args", {"sh", "-c", module}}}});
    spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
    f.write_spec(spec.dump(2));
    const auto r =
        f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-params"});
    CHECK(r.err == "");
    CHECK(r.out == kContainerParams + "0\nread-only\n");
    CHECK(gcr::test::read_file(host_params) == kHostParams);  // the host's file is untouched
    CHECK(f.hook_names() == std::vector<std::string>{"/bin/sh", "update-libraries",
                                                     "disable-device-node-modification"});
  }

  TEST_CASE("a host whose driver does not modify device nodes: no hook") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod)");
    GpuFixture f;
    gcr::test::write_file(f.host().dev_root() + kParams, "ModifyDeviceFiles: 0\n");
    REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"}).exit_code == 0);
    CHECK(f.hook_names() == std::vector<std::string>{"update-libraries"});
  }

  TEST_CASE("the hook: a read-only copy over the rootfs' params file, in its namespace only") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "mounting needs root");
    gcr::test::TempDir t;
    const std::string root = t / "rootfs";
    gcr::test::write_file(root + kParams, kHostParams);
    gcr::test::make_dirs(root + "/dev");
    // Kernels older than 5.12 (RHEL 8's 4.18 has neither openat2 nor the new mount API) get
    // the same with mount(2): a bind, then a read-only remount of the bind.
    std::string old_kernel;
    SUBCASE("this kernel") {}
    SUBCASE("no mount_setattr (5.6 to 5.11)") {
      old_kernel = "--mount-setattr";
    }
    SUBCASE("no openat2 and no new mount API (before 5.2)") {
      old_kernel = "--old-kernel";
    }
    CAPTURE(old_kernel);
    const auto r = run_hook(t, root,
                            "cat \"$1/proc/driver/nvidia/params\"; ls -A \"$1/dev\" | wc -l; "
                            "grep \"$1/proc/driver/nvidia/params\" /proc/self/mountinfo | "
                            "grep -c ' ro,nosuid,nodev,noexec'",
                            old_kernel);
    CHECK(r.err == "");
    CHECK(r.out == kContainerParams + "0\n1\n");
    CHECK(gcr::test::read_file(root + kParams) == kHostParams);  // outside: as it was
  }

  TEST_CASE("the hook does nothing when there is nothing to hide or nowhere to hide it") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "mounting needs root");
    gcr::test::TempDir t;
    const std::string root = t / "rootfs";
    gcr::test::make_dirs(root + "/dev");
    const std::string show = "cat \"$1/proc/driver/nvidia/params\"";
    SUBCASE("no NVIDIA params in the container") {
      const auto r = run_hook(t, root, "echo done");
      CHECK(r.err == "");
      CHECK(r.out == "done\n");
    }
    SUBCASE("device-node modification off already") {
      gcr::test::write_file(root + kParams, kContainerParams);
      const auto r = run_hook(t, root, show);
      CHECK(r.err == "");
      CHECK(r.out == kContainerParams);
    }
    SUBCASE("a second run in the same namespace covers nothing twice") {
      gcr::test::write_file(root + kParams, kHostParams);
      const std::string again = "\"" + gcr::test::built("gpu-ctk") +
                                "\" hook disable-device-node-modification < \"" + t / "state.json" +
                                "\"";
      const auto r = run_hook(t, root,
                              again +
                                  " && grep -c \"$1/proc/driver/nvidia/params\" "
                                  "/proc/self/mountinfo && " +
                                  show);
      CHECK(r.err == "");
      CHECK(r.out == "1\n" + kContainerParams);
    }
  }

  TEST_CASE("the hook never follows the image's links: an error, nothing mounted") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "mounting needs root");
    gcr::test::TempDir t;
    const std::string root = t / "rootfs";
    gcr::test::make_dirs(root + "/dev");
    gcr::test::write_file(t / "host/driver/nvidia/params", kHostParams);
    const std::string in_container = std::string(kParams) + " in the container";
    const std::string loop =
        "Too many levels of symbolic links (" + std::string(kParams) + " in " + root + ")";
    std::string why;
    SUBCASE("/proc a link to a host directory") {
      gcr::test::make_symlink(t / "host", root + "/proc");
      why = in_container + ": cannot open it: " + loop;
    }
    SUBCASE("the params file a link") {
      gcr::test::make_dirs(root + "/proc/driver/nvidia");
      gcr::test::make_symlink(t / "host/driver/nvidia/params", root + kParams);
      why = in_container + ": cannot open it: " + loop;
    }
    SUBCASE("the params file a FIFO") {
      gcr::test::make_dirs(root + "/proc/driver/nvidia");
      REQUIRE(::mkfifo((root + kParams).c_str(), 0644) == 0);
      why = "not a regular file (" + in_container + ")";
    }
    const auto r =
        run_hook(t, root, "echo mounted; cat \"" + t / "host/driver/nvidia/params" + "\"");
    CHECK(r.exit_code == 1);
    CHECK(r.out == "");
    CHECK(r.err == "gpu-ctk hook disable-device-node-modification: " + why + "\n");
    CHECK(gcr::test::read_file(t / "host/driver/nvidia/params") == kHostParams);
    // Nor does the walk of kernels without openat2.
    const auto old = run_hook(t, root, "echo mounted", "--old-kernel");
    CHECK(old.exit_code == 1);
    CHECK(old.out == "");
    CHECK(gcr::test::read_file(t / "host/driver/nvidia/params") == kHostParams);
  }
}
