#include "doctor/kubernetes_checks.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cstring>

#include "base/fs.h"
#include "base/node_stat.h"
#include "base/text.h"
#include "doctor/engine_facts.h"
#include "doctor/host_programs.h"
#include "driver/host.h"

namespace gcr {
namespace {

constexpr const char* kArea = "kubernetes";

// Whether something accepts connections on the unix socket at `path`.
bool answers(const std::string& path) {
  sockaddr_un addr{};
  if (path.size() >= sizeof addr.sun_path) return false;
  Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return false;
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

void check_sockets(const Config& config, Findings& findings) {
  const std::string& dir = config.device_plugin.kubelet_dir;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    findings.ok(kArea, "no kubelet device-plugin directory: not a Kubernetes node", dir);
    return;
  }
  const std::string kubelet = dir + "/kubelet.sock";
  if (answers(kubelet)) {
    findings.ok(kArea, "the kubelet answers", kubelet);
  } else {
    findings.fail(kArea, "the kubelet does not answer on its device-plugin socket", kubelet,
                  "systemctl status kubelet");
  }
  const std::string ours = dir + "/" + plugin_socket_name(config.device_plugin.resource_name);
  if (answers(ours)) {
    findings.ok(kArea, "gpu-device-plugin serves " + config.device_plugin.resource_name, ours);
  } else if (answers(dir + "/nvidia-gpu.sock")) {
    findings.ok(kArea, "NVIDIA's device plugin serves nvidia.com/gpu", dir + "/nvidia-gpu.sock");
  } else {
    findings.fail(
        kArea,
        "no device plugin answers: the node advertises no " + config.device_plugin.resource_name,
        ours,
        "systemctl enable --now gpu-device-plugin (or deploy its DaemonSet: README, "
        "Kubernetes)");
  }
}

bool has_prefix_for(const std::vector<std::string>& prefixes, const std::string& key) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const std::string& p) { return key.rfind(p, 0) == 0; });
}

constexpr std::size_t kMaxKubeletConfig = 1 << 20;

// What `<name> --version` prints; an error when it is not installed here or does not answer.
Result<std::string> version_output(const std::string& name) {
  auto program = program_in_path(name);
  if (!program) return program.error();
  return program_version(*program);
}

// Why the node's kubelet or containerd would drop the cdi_devices the plugin hands out: a
// kubelet before 1.29 (1.28 without its feature gate), a containerd before 1.7. "" when neither
// is too old; a kubelet that is not here to ask (a doctor in a container) is not judged.
std::string cdi_cri_gap(const DoctorOptions& options) {
  if (auto kubelet = version_output("kubelet")) {
    auto release = kubelet_release(*kubelet);
    if (!release) return "";  // a kubelet we cannot read is not judged
    auto yaml = read_regular_file(options.kubelet_config, kMaxKubeletConfig);
    const std::string why = kubelet_lacks_cdi_devices(*release, yaml ? *yaml : "");
    if (!why.empty()) return why;
  }
  if (auto containerd = version_output("containerd")) {
    if (auto release = containerd_release(*containerd))
      return containerd_lacks_cdi_devices(*release);
  }
  return "";
}

void check_strategy(const Config& config, const DoctorOptions& options, Findings& findings) {
  const auto& plugin = config.device_plugin;
  const auto& requests = config.requests;
  const std::string evidence = "[device-plugin] device-list = [" + join(plugin.device_list, ", ") +
                               "]" + (config.source.empty() ? "" : " in " + config.source);
  bool failed = false;
  for (const auto& strategy : plugin.device_list) {
    if (strategy == "envvar" && !requests.accept_env_when_unprivileged) {
      failed = true;
      findings.fail(kArea,
                    "device-list envvar, but accept-env-when-unprivileged = false: pods without "
                    "CAP_SYS_ADMIN get no GPU",
                    evidence,
                    "device-list = [\"volume-mounts\"] with accept-volume-mounts = true, or "
                    "accept-env-when-unprivileged = true in [requests]");
    } else if (strategy == "volume-mounts" && !requests.accept_volume_mounts) {
      failed = true;
      findings.fail(kArea,
                    "device-list volume-mounts, but accept-volume-mounts = false: pods get no GPU",
                    evidence, "accept-volume-mounts = true in [requests]");
    } else if (strategy == "cdi-annotations" &&
               !has_prefix_for(requests.annotation_prefixes,
                               plugin_cdi_annotation_key(plugin.resource_name))) {
      failed = true;
      findings.fail(kArea,
                    "device-list cdi-annotations, but annotation-prefixes leaves out cdi.k8s.io/: "
                    "pods get no GPU",
                    evidence, "annotation-prefixes = [\"cdi.k8s.io/\"] in [requests]");
    } else if (strategy == "cdi-cri") {
      const std::string gap = cdi_cri_gap(options);
      if (gap.empty()) continue;
      failed = true;
      findings.fail(kArea, "device-list cdi-cri, but " + gap + ": pods get no GPU", evidence,
                    "device-list = [\"cdi-annotations\"] in [device-plugin], or kubelet 1.29 "
                    "and containerd 1.7 (enable_cdi = true) or later");
    }
  }
  if (!failed) findings.ok(kArea, "the runtime accepts what the device plugin hands out", evidence);
}

// [device-plugin] imex-channel: whether the node has the default IMEX channel it gives (the
// plugin looks for its character device alone, as here).
void check_imex_channel(const Config& config, Findings& findings) {
  const std::string& mode = config.device_plugin.imex_channel;
  if (mode == "disabled") return;
  DriverHost host(config.driver, lstat_node);
  const auto node = host.devices().imex_channel_device(0);
  const std::string evidence = "[device-plugin] imex-channel = " + mode +
                               (config.source.empty() ? "" : " in " + config.source);
  if (node) {
    findings.ok(kArea, "pods given GPUs get IMEX channel 0 (" + node->host_path + ")", evidence);
  } else if (mode == "auto") {
    findings.ok(kArea, "no IMEX channel 0 on this node, so pods get none: " + node.error().message,
                evidence);
  } else {
    findings.fail(kArea,
                  "imex-channel = enabled, but this node has no IMEX channel 0: pods given GPUs "
                  "are refused (" +
                      node.error().message + ")",
                  evidence,
                  "load the driver with NVreg_CreateImexChannel0=1, or imex-channel = \"auto\" "
                  "in [device-plugin]");
  }
}

}  // namespace

void check_kubernetes(const Config& config, const DoctorOptions& options, Findings& findings) {
  check_sockets(config, findings);
  check_strategy(config, options, findings);
  check_imex_channel(config, findings);
}

}  // namespace gcr
