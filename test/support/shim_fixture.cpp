#include "shim_fixture.h"

#include "oci/runtime_lookup.h"

#include <unistd.h>

#include <stdexcept>

namespace gcr::test {

ShimFixture::ShimFixture() {
  make_dirs(dir_ / "bundle");
  write_config();
}

void ShimFixture::write_config(const Json& extra) const {
  Json config = {{"runtime", {{"runtimes", {built("fake-runc")}}}}};
  config.merge_patch(extra);
  write_file(config_path(), config.dump(2));
}

void ShimFixture::write_spec(const std::string& text) const {
  write_file(spec_path(), text);
}

ProcessResult ShimFixture::shim(const std::vector<std::string>& args, RunOptions options) const {
  std::vector<std::string> argv{program_.empty() ? built("gpu-container-runtime") : program_};
  argv.insert(argv.end(), args.begin(), args.end());
  options.env.emplace("GPU_CONTAINER_RUNTIME_CONFIG", config_path());
  options.env.emplace("FAKE_RUNC_RECORD", dir_ / "record.json");
  options.env.emplace("FAKE_RUNC_SPEC", spec_path());
  if (exists(dir_ / "record.json")) ::unlink((dir_ / "record.json").c_str());
  return run(argv, options);
}

void ShimFixture::set_program(const std::string& path) {
  make_symlink(built("gpu-container-runtime"), path);
  program_ = path;
}

Json ShimFixture::record() const {
  if (!exists(dir_ / "record.json")) return nullptr;
  return Json::parse(read_file(dir_ / "record.json"));
}

std::string runc_path() {
  auto runc = find_low_level_runtime({"runc"}, "");
  if (!runc) throw std::runtime_error("runc is not installed: run scripts/install-deps.sh");
  return *runc;
}

Json busybox_spec(const std::vector<std::string>& args) {
  Json spec = Json::parse(R"({
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": {"uid": 0, "gid": 0},
    "args": [],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    },
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs", "readonly": false},
  "hostname": "gcr-test",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs", "options": ["nosuid", "noexec", "nodev", "ro"]}
  ],
  "linux": {
    "resources": {"devices": [{"allow": false, "access": "rwm"}]},
    "namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}],
    "maskedPaths": ["/proc/kcore", "/sys/firmware"],
    "readonlyPaths": ["/proc/sys", "/proc/sysrq-trigger"]
  }
})");
  spec["process"]["args"] = args;
  return spec;
}

void make_busybox_rootfs(const std::string& bundle) {
  const std::string rootfs = bundle + "/rootfs";
  make_dirs(rootfs + "/bin");
  for (const char* dir : {"/proc", "/dev", "/sys", "/etc", "/tmp", "/usr/lib", "/lib"})
    make_dirs(rootfs + dir);
  auto copied = run({"/bin/cp", "/bin/busybox", rootfs + "/bin/busybox"});
  if (copied.exit_code != 0) throw std::runtime_error("cannot copy /bin/busybox: " + copied.err);
  for (const char* applet :
       {"sh", "ls", "cat", "echo", "stat", "readlink", "grep", "test", "env", "id"}) {
    make_symlink("busybox", rootfs + "/bin/" + applet);
  }
}

std::string make_busybox_image_tar(const std::string& dir) {
  make_busybox_rootfs(dir);
  const std::string tar = dir + "/image.tar";
  const auto packed = run({"/bin/tar", "-C", dir + "/rootfs", "-cf", tar, "."});
  if (packed.exit_code != 0)
    throw std::runtime_error("cannot pack the busybox image: " + packed.err);
  return tar;
}

void make_glibc_rootfs(const std::string& bundle) {
  make_busybox_rootfs(bundle);
  const std::string rootfs = bundle + "/rootfs";
  const std::string libdir = rootfs + "/lib/x86_64-linux-gnu";
  make_dirs(libdir);
  make_dirs(rootfs + "/lib64");
  for (const char* lib : {"libc.so.6", "ld-linux-x86-64.so.2"}) {
    if (run({"/bin/cp", "-L", std::string("/lib/x86_64-linux-gnu/") + lib, libdir + "/" + lib})
            .exit_code != 0) {
      throw std::runtime_error(std::string("cannot copy ") + lib);
    }
  }
  make_symlink("/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
               rootfs + "/lib64/ld-linux-x86-64.so.2");
  write_file(rootfs + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  write_file(rootfs + "/etc/ld.so.conf.d/x86_64-linux-gnu.conf",
             "/usr/local/lib/x86_64-linux-gnu\n/lib/x86_64-linux-gnu\n/usr/lib/x86_64-linux-gnu\n");
  write_file(rootfs + "/etc/debian_version", "12.0\n");
  if (run({"/bin/cp", built("dlopen-probe"), rootfs + "/probe"}).exit_code != 0)
    throw std::runtime_error("cp probe");
  if (run({"/sbin/ldconfig", "-r", rootfs}).exit_code != 0) throw std::runtime_error("ldconfig -r");
}

}  // namespace gcr::test
