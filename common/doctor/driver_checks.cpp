#include "doctor/driver_checks.h"

#include <sys/stat.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <set>
#include <string_view>

#include "base/fs.h"
#include "base/node_stat.h"
#include "base/text.h"
#include "driver/host.h"
#include "driver/host_facts.h"
#include "driver/nvml.h"

namespace gcr {
namespace {

constexpr const char* kArea = "driver";

CapabilitySet just(Capability cap) {
  CapabilitySet caps;
  caps.add(cap);
  return caps;
}

bool has_node(const std::vector<DeviceNode>& nodes, const std::string& path) {
  for (const auto& n : nodes) {
    if (n.path == path) return true;
  }
  return false;
}

void check_gpu_nodes(DriverHost& host, const std::vector<Gpu>& gpus, Findings& findings) {
  for (const auto& gpu : gpus) {
    const std::string name = "GPU " + std::to_string(gpu.index);
    auto node = host.devices().gpu_node(gpu);
    if (node && !gpu.uuid_known()) {
      findings.warn(kArea,
                    name + " at " + gpu.bus.to_string() +
                        ": the driver gives no UUID for it yet (not initialised): containers "
                        "naming it by UUID fail, and the device plugin waits to advertise it",
                    host.devices().dev_path("/proc/driver/nvidia/gpus/" + gpu.bus.to_string() +
                                            "/information"),
                    "systemctl enable --now nvidia-persistenced");
    } else if (node) {
      findings.ok(kArea, name + " " + gpu.uuid + " at " + gpu.bus.to_string(),
                  host.devices().dev_path(node->path));
    } else {
      findings.fail(
          kArea, name + ": " + node.error().message,
          host.devices().dev_path("/dev/nvidia" + std::to_string(gpu.minor)),
          "nvidia-modprobe -c " + std::to_string(gpu.minor) + " (or reload the nvidia module)");
    }
  }
}

void check_control_nodes(DriverHost& host, Findings& findings) {
  auto control = host.devices().control_nodes(just(Capability::kUtility));
  if (!control) {
    findings.fail(kArea, control.error().message, host.devices().dev_path("/dev/nvidiactl"),
                  "nvidia-modprobe (or reload the nvidia module)");
    return;
  }
  findings.ok(kArea, "nvidiactl present", host.devices().dev_path("/dev/nvidiactl"));
  auto compute = host.devices().control_nodes(just(Capability::kCompute));
  if (compute && has_node(*compute, "/dev/nvidia-uvm")) {
    findings.ok(kArea, "nvidia-uvm loaded", host.devices().dev_path("/dev/nvidia-uvm"));
  } else {
    findings.fail(kArea, "nvidia-uvm is not loaded: CUDA fails in every container",
                  compute ? host.devices().dev_path("/dev/nvidia-uvm") : compute.error().message,
                  "nvidia-modprobe -u -c=0");
  }
}

// The versions of libcuda.so.<version> the driver root's library folders hold, but for
// `version`: a driver upgraded without a reboot has the new libraries and the old module.
std::set<std::string> other_libcuda_versions(DriverHost& host, const std::string& version) {
  static constexpr std::string_view kDirs[] = {"/usr/lib/x86_64-linux-gnu",
                                               "/usr/lib/aarch64-linux-gnu",
                                               "/usr/lib64",
                                               "/lib64",
                                               "/usr/lib",
                                               "/usr/local/nvidia/lib64",
                                               "/usr/lib/x86_64-linux-gnu/nvidia/current"};
  constexpr std::string_view kPrefix = "libcuda.so.";
  constexpr std::size_t kMaxEntries = 1 << 16;
  std::set<std::string> versions;
  for (const auto dir : kDirs) {
    const std::string path = host.files().driver_path(std::string(dir));
    auto fd = open_directory(path);
    if (!fd) continue;
    auto entries = list_directory(std::move(*fd), path, kMaxEntries);
    if (!entries) continue;
    for (const auto& e : *entries) {
      if (!e.name.starts_with(kPrefix)) continue;
      const std::string v = e.name.substr(kPrefix.size());
      if (v != version && v.find('.') != std::string::npos &&
          v.find_first_not_of("0123456789.") == std::string::npos)
        versions.insert(v);
    }
  }
  return versions;
}

// A version part as a number (one too long to be one counts as the largest).
unsigned long long version_part(std::string_view part) {
  unsigned long long n = 0;
  const auto [end, error] = std::from_chars(part.data(), part.data() + part.size(), n);
  return error == std::errc() && end == part.data() + part.size() ? n : ULLONG_MAX;
}

// Whether the dotted version `a` ("535.183.01") comes before `b`, part by part as numbers.
bool older_version(const std::string& a, const std::string& b) {
  const auto as = split(a, '.');
  const auto bs = split(b, '.');
  for (std::size_t i = 0; i < as.size() && i < bs.size(); ++i) {
    const auto x = version_part(as[i]);
    const auto y = version_part(bs[i]);
    if (x != y) return x < y;
  }
  return as.size() < bs.size();
}

// The module and the libraries of two versions: said once, as what it is, rather than as
// missing libraries (whose fix, reinstalling, does not help).
bool check_version_mismatch(DriverHost& host, const std::string& version, Findings& findings) {
  if (driver_library_path(host, Capability::kCompute, "libcuda.so") ||
      host.files().refusal("libcuda.so"))
    return false;
  const auto others = other_libcuda_versions(host, version);
  // The newest is the one installed last; only one newer than the module is an upgrade a reboot
  // completes (older ones are leftovers, and the libraries are missing).
  const auto newest = std::max_element(others.begin(), others.end(), older_version);
  if (newest == others.end() || !older_version(version, *newest)) return false;
  findings.fail(kArea,
                "the kernel module " + version + " is loaded but the driver's libraries are " +
                    *newest +
                    ": the driver was upgraded without a reboot, and CUDA and NVML fail in every "
                    "container (NVML: Driver/library version mismatch)",
                host.devices().dev_path("/proc/driver/nvidia/version"),
                "reboot (or stop what uses the GPUs, then rmmod nvidia_uvm nvidia_drm "
                "nvidia_modeset nvidia and modprobe nvidia)");
  return true;
}

void check_libcuda(DriverHost& host, const std::string& version, Findings& findings) {
  const auto cuda = ask_libcuda(host, version);
  const std::string fix =
      "install or reinstall the driver's user-space libraries of version " + version;
  if (cuda.answer)
    findings.ok(kArea, "libcuda answers: CUDA " + *cuda.answer, cuda.path);
  else if (cuda.path.empty())
    findings.fail(kArea, cuda.answer.error().message, host.files().driver_path("/"), fix);
  else
    findings.fail(kArea, "libcuda does not answer: " + cuda.answer.error().message, cuda.path, fix);
}

void check_nvml(DriverHost& host, const std::vector<Gpu>& gpus, const std::string& version,
                Findings& findings) {
  const auto nvml = ask_nvml(host, gpus, version);
  const std::string fix =
      "install or reinstall the driver's user-space libraries of version " + version;
  if (nvml.answer)
    findings.ok(kArea, "NVML answers for " + std::to_string(nvml.answer->size()) + " GPUs",
                nvml.path);
  else if (nvml.kernel_driver)
    findings.fail(kArea,
                  "the NVIDIA kernel module is not loaded or does not match the libraries (" +
                      version + "): " + nvml.answer.error().message,
                  nvml.path,
                  "check that /dev/nvidiactl exists and opens, and that the running module is "
                  "the libraries' version " +
                      version +
                      " (cat /proc/driver/nvidia/version): load it (modprobe nvidia), or reboot "
                      "after a driver upgrade");
  else if (nvml.path.empty())
    findings.fail(kArea,
                  nvml.answer.error().message +
                      ": nvidia-smi and gpu-device-plugin's topology and health need it",
                  host.files().driver_path("/"), fix);
  else
    findings.fail(kArea, "NVML does not answer: " + nvml.answer.error().message, nvml.path, fix);
}

// What NVML says of each GPU's state that keeps containers from it: a compute mode other than
// Default (Exclusive_Process takes one process at a time, which NVIDIA's MPS daemon sets and
// leaves when killed; Prohibited takes none), or MIG mode with no MIG device (CUDA sees no
// device on it).
void check_gpu_modes(DriverHost& host, const std::vector<Gpu>& gpus, Findings& findings) {
  const auto path = driver_library_path(host, Capability::kUtility, "libnvidia-ml.so");
  if (!path) return;
  auto nvml = Nvml::open(*path);
  if (!nvml) return;
  for (const auto& gpu : gpus) {
    const std::string id = gpu.uuid_known() ? gpu.uuid : gpu.bus.to_string();
    const std::string name = "GPU " + std::to_string(gpu.index) + " (" + id + ")";
    const std::string reset = "nvidia-smi -i " + id + " -c DEFAULT";
    const auto mode = (*nvml)->compute_mode(gpu.bus);
    if (mode == 2u) {
      findings.fail(kArea,
                    name +
                        " is in compute mode Prohibited: no CUDA context may be made on it, "
                        "so no container can use it",
                    *path, reset);
    } else if (mode == 1u || mode == 3u) {
      findings.warn(kArea,
                    name +
                        " is in compute mode Exclusive_Process: one process at a time may "
                        "use it, so containers sharing it (time-slicing, MPS shares of two "
                        "sizes) fail or wait (NVIDIA's MPS daemon sets this mode and leaves it "
                        "when killed)",
                    *path, reset);
    }
    if ((*nvml)->mig_mode(gpu.bus) == true && (*nvml)->mig_devices(gpu.bus).empty()) {
      findings.fail(kArea,
                    name +
                        " is in MIG mode with no MIG device: CUDA sees no device on it, in "
                        "any container",
                    *path,
                    "create MIG devices (nvidia-smi mig -cgi <profiles> -C), or turn MIG off "
                    "(nvidia-smi -i " +
                        id + " -mig 0)");
    }
  }
}

constexpr std::size_t kMaxModulesText = 16 << 20;
constexpr const char* kSecureBootVar =
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-e98c0e5eeb7c";

// Why the kernel module is not loaded, as the host tells it, and the fix.
struct ModuleProblem {
  std::string why;
  std::string fix;
};

bool lists_module(std::string_view proc_modules, std::string_view name) {
  for (auto line : split(proc_modules, '\n')) {
    if (line.starts_with(name) && line.size() > name.size() && line[name.size()] == ' ')
      return true;
  }
  return false;
}

// Whether depmod's modules.dep names NVIDIA's main module, compressed or not: nvidia.ko, or
// Debian's nvidia-current.ko and nvidia-tesla-<branch>[-current].ko (not their -uvm, -modeset,
// -drm or -peermem; nor the kernel's own nvidia-wmi-ec-backlight).
bool names_nvidia_module(std::string_view modules_dep) {
  for (auto line : split(modules_dep, '\n')) {
    const std::string_view path = line.substr(0, line.find(':'));
    const auto slash = path.rfind('/');
    const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
    const auto ko = name.find(".ko");
    if (ko == std::string_view::npos) continue;
    const std::string_view stem = name.substr(0, ko);
    if (stem == "nvidia" || stem == "nvidia-current" ||
        (stem.starts_with("nvidia-tesla-") && !stem.ends_with("-uvm") &&
         !stem.ends_with("-modeset") && !stem.ends_with("-drm") && !stem.ends_with("-peermem")))
      return true;
  }
  return false;
}

// UEFI's SecureBoot variable: four bytes of attributes, then 1 when it is on.
bool secure_boot_on(DriverHost& host) {
  const std::string bytes = host.fs().head(host.devices().dev_path(kSecureBootVar), 5);
  return bytes.size() == 5 && bytes[4] == 1;
}

// The running kernel's modules.dep in the driver root (the host's for root /, a driver
// container's own otherwise); "" when it has none (a driver container still starting is not
// judged by the host's, which holds no NVIDIA module by design) or the release is unreadable.
std::string modules_dep_path(DriverHost& host, const Config& config, const std::string& kernel) {
  if (kernel.empty() || kernel.find('/') != std::string::npos) return "";
  struct stat st {};
  const std::string dep = child_path(config.driver.root, "lib/modules/" + kernel + "/modules.dep");
  return host.fs().stat(dep, st) ? dep : "";
}

// nouveau holding the GPUs, no module built for the running kernel (its modules.dep lists
// none), or Secure Boot on (an unsigned module is refused); otherwise modprobe's own error
// says it. Nothing when the module is loaded: the driver's files are what failed, and their
// error stands.
std::optional<ModuleProblem> module_problem(DriverHost& host, const Config& config) {
  auto modules = host.fs().read_file(host.devices().dev_path("/proc/modules"), kMaxModulesText);
  if (modules && (lists_module(*modules, "nvidia") || lists_module(*modules, "nvidia_current")))
    return std::nullopt;
  if (modules && lists_module(*modules, "nouveau")) {
    return ModuleProblem{"the nouveau driver is loaded and holds the GPUs",
                         "blacklist nouveau (`blacklist nouveau` and `options nouveau modeset=0` "
                         "in /etc/modprobe.d/blacklist-nouveau.conf), rebuild the initramfs "
                         "(update-initramfs -u, or dracut -f), reboot"};
  }
  auto release = host.fs().read_file(host.devices().dev_path("/proc/sys/kernel/osrelease"), 256);
  const std::string kernel = release ? std::string(trim(*release)) : "";
  if (const std::string dep = modules_dep_path(host, config, kernel); !dep.empty()) {
    auto listed = host.fs().read_file(dep, kMaxModulesText);
    if (listed && !names_nvidia_module(*listed)) {
      return ModuleProblem{"no NVIDIA module is built for the running kernel " + kernel + " (" +
                               dep + " lists none)",
                           "install the kernel's headers (linux-headers-" + kernel +
                               ", or kernel-devel-" + kernel +
                               ") and rebuild the driver's module (dkms autoinstall), or boot "
                               "the kernel it was built for"};
    }
  }
  if (secure_boot_on(host)) {
    return ModuleProblem{"",
                         "modprobe nvidia; Secure Boot is on: where it says `Key was rejected by "
                         "service`, enroll the module's signing key with mokutil --import "
                         "(DKMS's: /var/lib/dkms/mok.pub, or /var/lib/shim-signed/mok/MOK.der "
                         "on older Ubuntu), reboot, or use a signed driver"};
  }
  return ModuleProblem{"", "modprobe nvidia (dmesg | grep -i nvrm says why it fails)"};
}

void check_persistenced(DriverHost& host, Findings& findings) {
  for (const char* socket :
       {"/run/nvidia-persistenced/socket", "/var/run/nvidia-persistenced/socket"}) {
    if (host.files().driver_file(socket, S_IFSOCK)) {
      findings.ok(kArea, "nvidia-persistenced is running", host.files().driver_path(socket));
      return;
    }
  }
  findings.warn(kArea,
                "nvidia-persistenced is not running: each container start re-initialises the GPUs "
                "(slower, and state is lost between jobs)",
                host.files().driver_path("/run/nvidia-persistenced/socket"),
                "systemctl enable --now nvidia-persistenced");
}

// How many NVSwitch device nodes (nvidia-nvswitch<N>) `dev` holds.
std::size_t nvswitch_count(DriverHost& host, const std::string& dev) {
  std::size_t count = 0;
  for (const auto& name : host.fs().list(dev)) {
    if (name.starts_with("nvidia-nvswitch") && parse_decimal(name.substr(15))) ++count;
  }
  return count;
}

constexpr std::size_t kMaxProcessesRead = 1 << 16;

// Whether a process named nv-fabricmanager (its comm, cut to 15 bytes) runs under `proc`, among
// the first kMaxProcessesRead.
bool fabric_manager_runs(DriverHost& host, const std::string& proc) {
  std::size_t read = 0;
  for (const auto& pid : host.fs().list(proc)) {
    if (!parse_decimal(pid)) continue;
    if (++read > kMaxProcessesRead) break;
    const std::string comm = host.fs().head(proc + "/" + pid + "/comm", 32);
    if (trim(comm) == "nv-fabricmanage") return true;
  }
  return false;
}

// On an NVSwitch system (HGX and DGX A100, H100, H200) CUDA can use no GPU until NVIDIA's fabric
// manager has set the fabric up: error 802, "system not yet initialized". A warning: a doctor
// in a container without the host's PID namespace sees no host process.
void check_fabric_manager(DriverHost& host, Findings& findings) {
  const std::string dev = host.devices().dev_path("/dev");
  const std::size_t switches = nvswitch_count(host, dev);
  if (switches == 0) return;
  const std::string proc = host.devices().dev_path("/proc");
  const std::string what = std::to_string(switches) + " NVSwitch" + (switches == 1 ? "" : "es");
  if (fabric_manager_runs(host, proc)) {
    findings.ok(kArea, "the fabric manager runs for the " + what, proc);
    return;
  }
  findings.warn(kArea,
                "this host has " + what +
                    " and no nv-fabricmanager process runs: CUDA fails with error 802 (system "
                    "not yet initialized) until it does",
                dev + "/nvidia-nvswitch*",
                "install the fabric manager of the driver's exact version "
                "(nvidia-fabricmanager-<branch> on Ubuntu, nvidia-fabric-manager on RHEL), then "
                "systemctl enable --now nvidia-fabricmanager");
}

}  // namespace

std::optional<std::string> check_driver(const Config& config, Findings& findings) {
  DriverHost host(config.driver, lstat_node);
  auto version = host.devices().version();
  if (!version && host.devices().is_wsl()) {
    findings.fail(kArea, version.error().message, host.devices().dev_path("/dev/dxg"),
                  "in WSL2 use NVIDIA's container toolkit (Docker Desktop has it); this runtime "
                  "needs a Linux host with NVIDIA's kernel driver");
    return std::nullopt;
  }
  if (!version) {
    const auto problem = module_problem(host, config);
    if (!problem) {
      findings.fail(kArea, version.error().message,
                    host.devices().dev_path("/proc/driver/nvidia/version"),
                    "check dmesg for NVRM errors");
      return std::nullopt;
    }
    findings.fail(kArea,
                  "the NVIDIA kernel module is not loaded: " +
                      (problem->why.empty() ? version.error().message : problem->why),
                  host.devices().dev_path("/proc/driver/nvidia/version"), problem->fix);
    return std::nullopt;
  }
  findings.ok(kArea, "kernel module " + *version + " loaded",
              host.devices().dev_path("/proc/driver/nvidia/version"));
  auto gpus = host.devices().gpus();
  if (!gpus) {
    findings.fail(kArea, gpus.error().message, host.devices().dev_path("/proc/driver/nvidia/gpus"),
                  "check dmesg for NVRM errors");
  } else if (gpus->empty()) {
    findings.fail(kArea, "the driver lists no GPU",
                  host.devices().dev_path("/proc/driver/nvidia/gpus"),
                  "check dmesg for NVRM errors and lspci for the GPUs");
  } else {
    check_gpu_nodes(host, *gpus, findings);
  }
  check_control_nodes(host, findings);
  if (!check_version_mismatch(host, *version, findings)) {
    check_libcuda(host, *version, findings);
    if (gpus) check_nvml(host, *gpus, *version, findings);
    if (gpus) check_gpu_modes(host, *gpus, findings);
  }
  check_persistenced(host, findings);
  check_fabric_manager(host, findings);
  return *version;
}

}  // namespace gcr
