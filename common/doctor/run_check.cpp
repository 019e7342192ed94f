#include "doctor/run_check.h"

#include <fcntl.h>
#include <ftw.h>
#include <unistd.h>

#include <array>

#include "base/child_process.h"
#include "base/fs.h"
#include "base/node_stat.h"
#include "base/text.h"
#include "base/trust.h"
#include "doctor/host_programs.h"
#include "driver/host.h"
#include "driver/host_facts.h"
#include "driver/nvml.h"
#include "hooks/ldconfig_sandbox.h"
#include "json/strict_json.h"
#include "mps/mps_daemon.h"

namespace gcr {
namespace {

constexpr const char* kArea = "run";
constexpr const char* kProbe = "/gpu-cuda-probe";
constexpr const char* kMpsPipe = "/tmp/nvidia-mps";
constexpr std::size_t kMaxProgramBytes = 16u << 20;
constexpr std::size_t kMaxOutputBytes = 1u << 16;
constexpr int kContainerSeconds = 120;
// What the probe and the driver's libcuda load from glibc, where the host has them.
constexpr std::array kGlibcFiles = {"libc.so.6",  "libm.so.6",       "libdl.so.2",
                                    "librt.so.1", "libpthread.so.0", "ld-linux-x86-64.so.2"};
constexpr std::array kGlibcDirs = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
                                   "/usr/lib64"};

Status write_file(const std::string& path, std::string_view data, mode_t mode) {
  auto dirfd = open_directory(dirname_of(path));
  if (!dirfd) return dirfd.error();
  return write_file_atomic_at(dirfd->get(), basename_of(path), data, FileOwner{mode});
}

// A host program we run in the container: a regular file, trusted as the programs we run are.
Result<std::string> trusted_program(const std::string& path) {
  if (auto trusted = TrustCheck().program(path); !trusted) return trusted.error();
  return read_regular_file(path, kMaxProgramBytes);
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
  auto bytes = read_fd(fd.get(), kMaxProgramBytes);
  if (!bytes) return bytes.error();
  return *bytes;
}

// The host's glibc at the same paths in the rootfs (the probe and libcuda are dynamic), and the
// loader where the probe's ELF header names it.
Status copy_glibc(const std::string& rootfs) {
  bool have_loader = false;
  for (const char* name : kGlibcFiles) {
    for (const char* dir : kGlibcDirs) {
      const std::string host = std::string(dir) + "/" + name;
      auto bytes = read_regular_file(host, kMaxProgramBytes);
      if (!bytes) continue;
      if (auto s = make_directories(rootfs + dir); !s) return s;
      if (auto s = write_file(rootfs + host, *bytes, 0755); !s) return s;
      if (std::string_view(name) == "ld-linux-x86-64.so.2" && std::string_view(dir) != "/lib64") {
        if (auto s = make_directories(rootfs + "/lib64"); !s) return s;
        if (auto s = write_file(rootfs + "/lib64/" + name, *bytes, 0755); !s) return s;
      }
      have_loader = have_loader || std::string_view(name) == "ld-linux-x86-64.so.2";
      break;
    }
  }
  if (!have_loader) return Error{"the host has no ld-linux-x86-64.so.2 in /lib64 or /lib"};
  return {};
}

Status make_rootfs(const std::string& rootfs, const std::string& probe) {
  auto busybox = static_busybox();
  if (!busybox) return busybox.error();
  for (const char* dir : {"/bin", "/proc", "/dev", "/sys", "/tmp", "/etc"}) {
    if (auto s = make_directories(rootfs + dir); !s) return s;
  }
  if (auto s = write_file(rootfs + "/bin/busybox", *busybox, 0755); !s) return s;
  if (::symlink("busybox", (rootfs + "/bin/sh").c_str()) != 0)
    return Error{"symlink: " + errno_text(errno)};
  if (auto s = write_file(rootfs + kProbe, probe, 0755); !s) return s;
  return copy_glibc(rootfs);
}

// The GPU's memory as NVML tells it, where the driver root has NVML.
std::optional<unsigned long long> memory_mib(DriverHost& host, const PciAddress& bus) {
  const auto path = driver_library_path(host, Capability::kUtility, "libnvidia-ml.so");
  if (!path) return std::nullopt;
  auto nvml = Nvml::open(*path);
  if (!nvml) return std::nullopt;
  return (*nvml)->memory_mib(bus);
}

// Under sharing = "mps": what Allocate hands a container of one share of `gpu`.
void add_mps_client(const Config& config, DriverHost& host, const std::string& gpu, Json& spec) {
  if (!config.mps()) return;
  auto gpus = host.devices().gpus();
  if (!gpus) return;
  for (const auto& g : *gpus) {
    if (g.uuid != gpu && std::to_string(g.index) != gpu) continue;
    const auto replicas = config.replicas_for(g.index, g.model);
    const std::string dir =
        mps_dir(config.device_plugin.mps_root, config.device_plugin.resource_name, replicas, 1);
    auto& env = spec["process"]["env"];
    env.push_back(std::string("CUDA_MPS_PIPE_DIRECTORY=") + kMpsPipe);
    env.push_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=" +
                  std::to_string(share_percentage(replicas, 1)));
    if (const auto memory = memory_mib(host, g.bus))
      env.push_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=" +
                    std::to_string(share_mib(*memory, replicas, 1)) + "M");
    spec["mounts"].push_back({{"destination", kMpsPipe},
                              {"type", "bind"},
                              {"source", dir + "/pipe"},
                              {"options", {"rbind", "nosuid", "nodev", "noexec"}}});
    spec["mounts"].push_back({{"destination", "/dev/shm"},
                              {"type", "bind"},
                              {"source", dir + "/shm"},
                              {"options", {"rbind", "nosuid", "nodev", "noexec"}}});
    return;
  }
}

// runc's own default spec, with our process: the probe, asking for `gpu`.
Status write_spec(const Config& config, DriverHost& host, const std::string& runtime,
                  const std::string& bundle, const std::string& gpu) {
  auto made = run_child({runtime, "spec", "--bundle", bundle}, minimal_environment(), 30, 1 << 16);
  if (!made) return made.error();
  if (made->exit_code != 0) return Error{"spec: " + std::string(trim(made->err))};
  auto text = read_regular_file(bundle + "/config.json", 1 << 20);
  if (!text) return text.error();
  auto spec = parse_json_strict(*text);
  if (!spec) return spec.error();
  auto& process = (*spec)["process"];
  process["terminal"] = false;
  process["args"] = Json::array({kProbe});
  process["env"] = Json::array(
      {"PATH=/bin", "NVIDIA_VISIBLE_DEVICES=" + gpu, "NVIDIA_DRIVER_CAPABILITIES=compute,utility"});
  (*spec)["root"]["readonly"] = false;
  add_mps_client(config, host, gpu, *spec);
  return write_file(bundle + "/config.json", json_text(*spec, 2), 0644);
}

void remove_tree(const std::string& dir) {
  (void)::nftw(
      dir.c_str(),
      [](const char* path, const struct stat*, int, struct FTW*) { return ::remove(path); }, 16,
      FTW_DEPTH | FTW_PHYS);
}

std::string one_line(const std::string& text) {
  std::string out(trim(text));
  for (auto& c : out) {
    if (c == '\n') c = ' ';
  }
  return printable(out.size() > 300 ? out.substr(0, 300) + "..." : out, 310);
}

// The probe's lines ("ok    step: what" / "FAIL  step: why") as findings about `gpu`; true when
// it said anything.
bool report_probe(const std::string& out, const std::string& gpu, const std::string& command,
                  Findings& findings) {
  bool said = false;
  for (const auto& line : split(out, '\n')) {
    const std::string text(line);
    if (text.rfind("ok    ", 0) == 0) {
      findings.ok(kArea, "GPU " + gpu + ": " + one_line(text.substr(6)), command);
      said = true;
    } else if (text.rfind("FAIL  ", 0) == 0) {
      findings.fail(kArea, "GPU " + gpu + ": " + one_line(text.substr(6)), command,
                    "gpu-ctk doctor's other lines; the runtime's log ([runtime] log-file)");
      said = true;
    }
  }
  return said;
}

void run_container(const Config& config, DriverHost& host, const RunCheck& run,
                   const std::string& probe, const std::string& gpu, Findings& findings) {
  char dir[] = "/tmp/gpu-ctk-doctor-XXXXXX";
  if (::mkdtemp(dir) == nullptr) {
    findings.fail(kArea, "cannot make a bundle directory: " + errno_text(errno), "/tmp", "");
    return;
  }
  const std::string bundle = dir;
  const std::string command =
      run.shim_path + " run (NVIDIA_VISIBLE_DEVICES=" + gpu + ", gpu-cuda-probe)";
  if (auto s = make_rootfs(bundle + "/rootfs", probe); !s) {
    findings.fail(kArea, "cannot build the test container: " + s.error().message, bundle, "");
  } else if (auto w = write_spec(config, host, *run.runtime, bundle, gpu); !w) {
    findings.fail(kArea, "cannot write the test container's spec: " + w.error().message, bundle,
                  "");
  } else {
    const std::string id = "gpu-ctk-doctor-" + std::to_string(::getpid());
    std::vector<std::string> argv{run.shim_path};
    if (!config.source.empty()) argv.push_back("--gpu-config=" + config.source);
    argv.insert(argv.end(), {"run", "--bundle", bundle, id});
    auto ran = run_child(argv, minimal_environment(), kContainerSeconds, kMaxOutputBytes);
    (void)run_child({*run.runtime, "delete", "--force", id}, minimal_environment(), 30, 1 << 16);
    if (!ran) {
      findings.fail(kArea,
                    "GPU " + gpu + ": the test container did not run: " + ran.error().message,
                    command, "");
    } else if (!report_probe(ran->out, gpu, command, findings) || ran->exit_code != 0) {
      if (ran->exit_code != 0 && ran->out.find("FAIL  ") == std::string::npos)
        findings.fail(
            kArea, "GPU " + gpu + ": the test container failed: " + one_line(ran->err + ran->out),
            command, "the line above names what to fix");
    }
  }
  remove_tree(bundle);
}

}  // namespace

void check_run(const Config& config, const RunCheck& run, Findings& findings) {
  if (!run.runtime) {
    findings.fail(kArea, "no low-level runtime to run with", "[runtime] runtimes",
                  "apt install runc");
    return;
  }
  if (auto trusted = TrustCheck().program(run.shim_path); !trusted) {
    findings.fail(kArea, "gpu-container-runtime is not usable: " + trusted.error().message,
                  run.shim_path, "reinstall gpu-container-runtime, or name it with --runtime-path");
    return;
  }
  auto probe = trusted_program(run.probe_path);
  if (!probe) {
    findings.fail(kArea, "the CUDA probe is not usable: " + probe.error().message, run.probe_path,
                  "reinstall gpu-container-runtime, or name it with --probe");
    return;
  }
  DriverHost host(config.driver, lstat_node);
  std::vector<std::string> gpus = run.gpus;
  if (gpus.empty()) {
    auto found = host.devices().gpus();
    if (found) {
      for (const auto& gpu : *found) gpus.push_back(std::to_string(gpu.index));
    }
    if (gpus.empty()) {
      findings.fail(kArea, "no NVIDIA GPU on this host: nothing to run on",
                    host.devices().dev_path("/proc/driver/nvidia/gpus"),
                    "gpu-ctk doctor's driver lines say why the driver shows none");
      return;
    }
  }
  for (const auto& gpu : gpus) run_container(config, host, run, *probe, gpu, findings);
}

}  // namespace gcr
