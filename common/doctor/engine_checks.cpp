#include "doctor/engine_checks.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "base/child_process.h"
#include "base/fs.h"
#include "base/text.h"
#include "doctor/engine_facts.h"
#include "doctor/host_programs.h"
#include "engines/engines.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxEngineFile = 4u << 20;

bool exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::string configure_fix(const std::string& engine, const std::string& config) {
  std::string fix = "gpu-ctk runtime configure --runtime=" + engine + " --set-as-default";
  if (config != default_engine_config(engine)) fix += " --config " + config;
  return fix + " && systemctl restart " + engine;
}

// The runtimes that are ours, by name.
std::vector<std::string> our_runtimes(const EngineFacts& facts, const std::string& shim_path) {
  std::vector<std::string> names;
  for (const auto& [name, runtime] : facts.runtimes) {
    if (!runtime.path.empty() && is_our_runtime(runtime.path, shim_path)) names.push_back(name);
  }
  return names;
}

// Names of runtimes whose path looks like ours but is missing (a removed or moved install).
std::vector<std::string> dangling_runtimes(const EngineFacts& facts) {
  std::vector<std::string> names;
  for (const auto& [name, runtime] : facts.runtimes) {
    const std::string base = basename_of(runtime.path);
    if ((base == "gpu-container-runtime" || base == "nvidia-container-runtime") &&
        !exists(runtime.path))
      names.push_back(name + " = " + runtime.path);
  }
  return names;
}

// Why the program an engine (root) runs at `path` cannot be run, with the fix; nullopt when it
// can. A name searched in PATH was found executable already (program_in_path).
struct NotRunnable {
  std::string why;
  std::string fix;
};

std::optional<NotRunnable> why_not_runnable(const std::string& path) {
  if (path.find('/') == std::string::npos) return std::nullopt;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return NotRunnable{errno_text(errno) + " (" + path + ")", ""};
  if (!S_ISREG(st.st_mode))
    return NotRunnable{"not a regular file (" + path + ")", "reinstall gpu-container-runtime"};
  if ((st.st_mode & 0111) == 0)
    return NotRunnable{"no execute permission (" + path + ")", "chmod 755 " + path};
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_NOEXEC) != 0)
    return NotRunnable{"its file system is mounted noexec (" + path + ")",
                       "remount it without noexec, or install gpu-container-runtime elsewhere"};
  return std::nullopt;
}

// The shared verdict: registered (FAIL if not), the default (FAIL or warn when not), and its
// program runnable (FAIL if not: every container through it would fail to start).
// Returns the name of our runtime, "" when none.
std::string registration(const char* area, const EngineFacts& facts, const std::string& evidence,
                         const std::string& fix, const std::string& shim_path,
                         CheckLevel not_default, const std::string& why_default,
                         Findings& findings) {
  const auto ours = our_runtimes(facts, shim_path);
  if (ours.empty()) {
    const auto dangling = dangling_runtimes(facts);
    findings.fail(area,
                  dangling.empty()
                      ? "gpu-container-runtime is not registered"
                      : "the registered runtime's program is missing: " + join(dangling, ", "),
                  evidence, fix);
    return "";
  }
  const auto is_default = std::find(ours.begin(), ours.end(), facts.default_runtime);
  const std::string name = is_default != ours.end() ? *is_default : ours.front();
  const std::string& program = facts.runtimes.at(name).path;
  if (const auto broken = why_not_runnable(program)) {
    findings.fail(area,
                  "runtime `" + name +
                      "` is gpu-container-runtime, but its program cannot be run: " + broken->why +
                      ": every container through it fails to start",
                  evidence + ": " + program, broken->fix);
  } else {
    findings.ok(area, "runtime `" + name + "` is gpu-container-runtime", evidence + ": " + program);
  }
  if (is_default != ours.end()) {
    findings.ok(area, "`" + name + "` is the default runtime", evidence);
  } else if (not_default == CheckLevel::kFail) {
    findings.fail(area,
                  "the default runtime is `" + facts.default_runtime + "`, not `" + name +
                      "`: " + why_default,
                  evidence, fix);
  } else {
    findings.warn(area,
                  "the default runtime is `" + facts.default_runtime + "`, not `" + name +
                      "`: " + why_default,
                  evidence, fix);
  }
  return name;
}

Result<std::string> read_text(const std::string& path) {
  return read_regular_file(path, kMaxEngineFile);
}

// containerd's effective configuration: `containerd config dump` when containerd is installed
// (imports and defaults applied), else the file itself.
Result<std::string> containerd_config_text(const std::string& config, std::string& evidence) {
  const auto containerd = program_in_path("containerd");
  if (!containerd) {
    evidence = config;
    return read_text(config);
  }
  evidence = "containerd --config " + config + " config dump";
  auto dump = run_child({*containerd, "--config", config, "config", "dump"}, minimal_environment(),
                        30, kMaxEngineFile);
  if (!dump) return dump.error();
  if (dump->exit_code != 0)
    return Error{"containerd cannot read it: " + std::string(trim(dump->err))};
  return dump->out;
}

void check_cgroup_driver(const EngineFacts& facts, const std::string& name,
                         const std::string& kubelet_config, const std::string& evidence,
                         Findings& findings) {
  auto text = read_text(kubelet_config);
  if (!text) return;  // no kubelet here: nothing to agree with
  auto driver = kubelet_cgroup_driver(*text);
  if (!driver) {
    findings.warn("containerd",
                  "cannot read the kubelet's configuration: " + driver.error().message,
                  kubelet_config, "");
    return;
  }
  const bool systemd = facts.runtimes.at(name).systemd_cgroup.value_or(false);
  const bool want = *driver == "systemd";
  const std::string ours = std::string("SystemdCgroup = ") + (systemd ? "true" : "false");
  if (systemd == want) {
    findings.ok("containerd", ours + " agrees with the kubelet's cgroupDriver " + *driver,
                evidence + "; " + kubelet_config);
    return;
  }
  findings.fail("containerd",
                "runtime `" + name + "` has " + ours + " but the kubelet's cgroupDriver is " +
                    *driver + ": pods fail with `devices.allow: no such file or directory`",
                evidence + "; " + kubelet_config,
                std::string("SystemdCgroup = ") + (want ? "true" : "false") + " in [" +
                    facts.runtimes_table + "." + name +
                    ".options], then systemctl restart containerd");
}

// crio.conf, then every file of crio.conf.d in name order, as CRI-O reads them.
std::vector<std::pair<std::string, std::string>> crio_files(const std::string& main,
                                                            Findings& findings) {
  std::vector<std::pair<std::string, std::string>> files;
  if (auto text = read_text(main)) files.emplace_back(main, *text);
  const std::string dir = dirname_of(main) + "/crio.conf.d";
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (e->d_type == DT_REG || e->d_type == DT_UNKNOWN) names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    auto text = read_text(dir + "/" + n);
    if (text)
      files.emplace_back(dir + "/" + n, *text);
    else
      findings.warn("crio", "cannot read a drop-in: " + text.error().message, dir + "/" + n, "");
  }
  return files;
}

}  // namespace

bool is_our_runtime(const std::string& path, const std::string& shim_path) {
  const auto found =
      path.find('/') == std::string::npos ? program_in_path(path) : Result<std::string>(path);
  char resolved[PATH_MAX];
  if (!found || ::realpath(found->c_str(), resolved) == nullptr) return false;
  if (basename_of(resolved) == "gpu-container-runtime") return true;
  struct stat a {
  }, b{};
  return !shim_path.empty() && ::stat(resolved, &a) == 0 && ::stat(shim_path.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

std::vector<std::string> engines_to_check(const DoctorOptions& options) {
  if (!options.engines.empty()) return options.engines;
  std::vector<std::string> found;
  if (program_in_path("dockerd") || exists(options.docker_config)) found.push_back("docker");
  if (program_in_path("containerd") || exists(options.containerd_config))
    found.push_back("containerd");
  if (program_in_path("crio") || exists(options.crio_config)) found.push_back("crio");
  if (program_in_path("podman")) found.push_back("podman");
  return found;
}

void check_docker(const DoctorOptions& options, Findings& findings) {
  const std::string& file = options.docker_config;
  const std::string fix = configure_fix("docker", file);
  auto text = read_text(file);
  if (!text) {
    findings.fail("docker", "gpu-container-runtime is not registered: " + text.error().message,
                  file, fix);
    return;
  }
  auto facts = docker_facts(*text);
  if (!facts) {
    findings.fail("docker", "daemon.json does not parse: " + facts.error().message, file,
                  "fix the file, then " + fix);
    return;
  }
  (void)registration("docker", *facts, file, fix, options.shim_path, CheckLevel::kWarn,
                     "`docker run --gpus` and Kubernetes need it; other containers need "
                     "`--runtime`",
                     findings);
}

void check_containerd(const DoctorOptions& options, Findings& findings) {
  const std::string& file = options.containerd_config;
  const std::string fix = configure_fix("containerd", file);
  std::string evidence;
  auto text = containerd_config_text(file, evidence);
  if (!text) {
    findings.fail("containerd", "cannot read the configuration: " + text.error().message, evidence,
                  fix);
    return;
  }
  auto facts = containerd_facts(*text, evidence);
  if (!facts) {
    findings.fail("containerd", "the configuration does not parse: " + facts.error().message,
                  evidence, "fix the file, then " + fix);
    return;
  }
  if (!facts->cri_disabled.empty()) {
    findings.fail("containerd",
                  "its CRI plugin is disabled (disabled_plugins holds \"" + facts->cri_disabled +
                      "\", as Docker's containerd.io package ships it): Kubernetes cannot use "
                      "this containerd, whatever runtime it names",
                  evidence,
                  "remove \"" + facts->cri_disabled + "\" from disabled_plugins in " + file +
                      ", then systemctl restart containerd");
    return;
  }
  const std::string name = registration(
      "containerd", *facts, evidence, fix, options.shim_path, CheckLevel::kFail,
      "Kubernetes pods and the device plugin get runc, so no GPU (\"could not load NVML\")",
      findings);
  if (!name.empty()) check_cgroup_driver(*facts, name, options.kubelet_config, evidence, findings);
}

void check_crio(const DoctorOptions& options, Findings& findings) {
  const std::string fix = configure_fix("crio", options.crio_config);
  auto facts = crio_facts(crio_files(options.crio_config, findings));
  if (!facts) {
    findings.fail("crio", "a configuration file does not parse: " + facts.error().message,
                  options.crio_config, "fix the file, then " + fix);
    return;
  }
  (void)registration("crio", *facts, dirname_of(options.crio_config) + "/crio.conf.d", fix,
                     options.shim_path, CheckLevel::kFail, "Kubernetes pods get runc, so no GPU",
                     findings);
}

void check_podman(const Config& config, const CdiRegistry& registry, Findings& findings) {
  const std::string prefix = config.cdi.default_kind + "=";
  std::size_t devices = 0;
  for (const auto& [name, where] : registry.devices) {
    if (name.rfind(prefix, 0) == 0) ++devices;
  }
  const std::string dirs = join(config.cdi.spec_dirs, ", ");
  if (devices == 0) {
    findings.warn("podman",
                  "no CDI device " + prefix + "*: `podman run --device " + prefix +
                      "0` cannot work (`--runtime gpu-container-runtime` still can)",
                  dirs, "gpu-ctk cdi generate --output /etc/cdi/nvidia.yaml");
    return;
  }
  findings.ok("podman", std::to_string(devices) + " CDI devices " + prefix + "*", dirs);
}

}  // namespace gcr
