#include "doctor/run_check.h"

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include "base/child_process.h"
#include "base/fs.h"
#include "base/text.h"
#include "base/trust.h"
#include "doctor/host_programs.h"
#include "hooks/ldconfig_sandbox.h"
#include "json/strict_json.h"

namespace gcr {
namespace {

constexpr const char* kArea = "run";
constexpr const char* kScript = "ls /dev | grep nvidia | tr '\\n' ' '";

Status write_file(const std::string& path, std::string_view data, mode_t mode) {
  auto dirfd = open_directory(dirname_of(path));
  if (!dirfd) return dirfd.error();
  return write_file_atomic_at(dirfd->get(), basename_of(path), data, FileOwner{mode});
}

// The host's busybox, which must be static (the container has no loader of its own).
Result<std::string> static_busybox() {
  const auto path = program_in_path("busybox");
  if (!path) return Error{path.error().message + " (apt install busybox-static)"};
  Fd fd(::open(path->c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return Error{errno_text(errno) + " (" + *path + ")"};
  auto is_static = is_static_elf(fd.get());
  if (!is_static) return is_static.error();
  if (!*is_static) return Error{"busybox is dynamically linked (apt install busybox-static)"};
  auto bytes = read_fd(fd.get(), 16u << 20);
  if (!bytes) return bytes.error();
  return *bytes;
}

Status make_rootfs(const std::string& rootfs) {
  auto busybox = static_busybox();
  if (!busybox) return busybox.error();
  for (const char* dir : {"/bin", "/proc", "/dev", "/sys", "/tmp", "/etc"}) {
    if (auto s = make_directories(rootfs + dir); !s) return s;
  }
  if (auto s = write_file(rootfs + "/bin/busybox", *busybox, 0755); !s) return s;
  for (const char* applet : {"sh", "ls", "grep", "tr"}) {
    if (::symlink("busybox", (rootfs + "/bin/" + applet).c_str()) != 0)
      return Error{"symlink: " + errno_text(errno)};
  }
  return {};
}

// runc's own default spec, with our process: GPU 0 by NVIDIA_VISIBLE_DEVICES.
Status write_spec(const std::string& runtime, const std::string& bundle) {
  auto made = run_child({runtime, "spec", "--bundle", bundle}, minimal_environment(), 30, 1 << 16);
  if (!made) return made.error();
  if (made->exit_code != 0) return Error{"spec: " + std::string(trim(made->err))};
  auto text = read_regular_file(bundle + "/config.json", 1 << 20);
  if (!text) return text.error();
  auto spec = parse_json_strict(*text);
  if (!spec) return spec.error();
  auto& process = (*spec)["process"];
  process["terminal"] = false;
  process["args"] = Json::array({"/bin/sh", "-c", kScript});
  process["env"] =
      Json::array({"PATH=/bin", "NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=utility"});
  (*spec)["root"]["readonly"] = false;
  return write_file(bundle + "/config.json", json_text(*spec, 2), 0644);
}

void remove_tree(const std::string& dir) {
  (void)::nftw(
      dir.c_str(),
      [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

std::string first_lines(const std::string& text) {
  std::string out(trim(text));
  for (auto& c : out) {
    if (c == '\n') c = ' ';
  }
  return out.size() > 300 ? out.substr(0, 300) + "..." : out;
}

void run_container(const Config& config, const std::string& runtime, const std::string& shim_path,
                   const std::string& bundle, Findings& findings) {
  if (auto s = make_rootfs(bundle + "/rootfs"); !s) {
    findings.fail(kArea, "cannot build the test container: " + s.error().message, bundle, "");
    return;
  }
  if (auto s = write_spec(runtime, bundle); !s) {
    findings.fail(kArea, "cannot write the test container's spec: " + s.error().message, bundle,
                  "");
    return;
  }
  const std::string id = "gpu-ctk-doctor-" + std::to_string(::getpid());
  std::vector<std::string> argv{shim_path};
  if (!config.source.empty()) argv.push_back("--gpu-config=" + config.source);
  argv.insert(argv.end(), {"run", "--bundle", bundle, id});
  auto ran = run_child(argv, minimal_environment(), 60, 1 << 16);
  (void)run_child({runtime, "delete", "--force", id}, minimal_environment(), 30, 1 << 16);
  const std::string command = shim_path + " run (NVIDIA_VISIBLE_DEVICES=0)";
  if (!ran) {
    findings.fail(kArea, "the test container did not run: " + ran.error().message, command, "");
    return;
  }
  if (ran->exit_code != 0) {
    findings.fail(kArea, "the test container failed: " + first_lines(ran->err + ran->out), command,
                  "the line above names what to fix");
    return;
  }
  const std::string saw = first_lines(ran->out);
  if (saw.find("nvidiactl") == std::string::npos) {
    findings.fail(kArea, "the test container saw no GPU: /dev had `" + saw + "`", command,
                  "gpu-ctk doctor's other lines; the runtime's log ([runtime] log-file)");
    return;
  }
  findings.ok(kArea, "a container through the shim saw " + saw, command);
}

}  // namespace

void check_run(const Config& config, const std::optional<std::string>& runtime,
               const std::string& shim_path, Findings& findings) {
  if (!runtime) {
    findings.fail(kArea, "no low-level runtime to run with", "[runtime] runtimes",
                  "apt install runc");
    return;
  }
  if (auto trusted = TrustCheck().program(shim_path); !trusted) {
    findings.fail(kArea, "gpu-container-runtime is not usable: " + trusted.error().message,
                  shim_path, "reinstall gpu-container-runtime, or name it with --runtime-path");
    return;
  }
  char dir[] = "/tmp/gpu-ctk-doctor-XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    findings.fail(kArea, "cannot make a bundle directory: " + errno_text(errno), "/tmp", "");
    return;
  }
  run_container(config, *runtime, shim_path, dir, findings);
  remove_tree(dir);
}

}  // namespace gcr
