#include "deviceplugin/nvidia_plugin_options.h"

#include <array>

#include "base/text.h"

namespace gcr {
namespace {

struct NvidiaOption {
  const char* flag;  // without the leading --
  const char* variable;
  const char* ours;  // what to set instead, or why nothing is needed
};

// NVIDIA's plugin's options (its docs/customizing.md and main.go), and ours.
constexpr std::array<NvidiaOption, 18> kOptions = {{
    {"mig-strategy", "MIG_STRATEGY", "[device-plugin] mig-strategy"},
    {"device-list-strategy", "DEVICE_LIST_STRATEGY", "[device-plugin] device-list"},
    {"device-id-strategy", "DEVICE_ID_STRATEGY", "[device-plugin] device-ids"},
    {"nvidia-driver-root", "NVIDIA_DRIVER_ROOT", "[driver] root"},
    {"nvidia-dev-root", "NVIDIA_DEV_ROOT", "[driver] dev-root"},
    {"mps-root", "MPS_ROOT", "[device-plugin] mps-root (and sharing = \"mps\")"},
    {"cdi-annotation-prefix", "CDI_ANNOTATION_PREFIX", "[requests] annotation-prefixes"},
    {"nvidia-ctk-path", "NVIDIA_CTK_PATH", "[hooks] ctk-path"},
    {"config-file", "CONFIG_FILE",
     "--config with this runtime's configuration file (gpu-ctk config default)"},
    {"fail-on-init-error", "FAIL_ON_INIT_ERROR",
     "nothing: without a driver the plugin advertises no device and keeps watching"},
    {"pass-device-specs", "PASS_DEVICE_SPECS",
     "nothing: the runtime writes the device rules into the container's spec, which a CPU "
     "manager's cgroup update keeps"},
    {"container-driver-root", "CONTAINER_DRIVER_ROOT", "[driver] root (one root for both)"},
    {"device-discovery-strategy", "DEVICE_DISCOVERY_STRATEGY",
     "nothing: the driver's /proc files and NVML are read"},
    {"gds-enabled", "GDS_ENABLED", "NVIDIA_GDS=enabled in the container's environment"},
    {"mofed-enabled", "MOFED_ENABLED", "NVIDIA_MOFED=enabled in the container's environment"},
    {"kubelet-socket", "KUBELET_SOCKET", "[device-plugin] kubelet-dir"},
    {"imex-channel-ids", "IMEX_CHANNEL_IDS", "[device-plugin] imex-channel (\"auto\" for [0])"},
    {"imex-required", "IMEX_REQUIRED",
     "[device-plugin] imex-channel (\"enabled\" for a required channel)"},
}};

// NVIDIA's health-check variables have no flag.
constexpr std::array<const char*, 2> kHealthVariables = {"DP_DISABLE_HEALTHCHECKS",
                                                         "DP_ENABLE_HEALTHCHECKS"};

}  // namespace

std::optional<std::string> nvidia_plugin_flag_refusal(const std::string& arg) {
  if (!arg.starts_with("--")) return std::nullopt;
  const std::string name =
      arg.substr(2, arg.find('=') == std::string::npos ? std::string::npos : arg.find('=') - 2);
  for (const auto& o : kOptions) {
    if (name == o.flag)
      return "--" + name + " is NVIDIA's plugin's flag, not read here: set " + o.ours;
  }
  return std::nullopt;
}

std::vector<std::string> nvidia_plugin_env_warnings(
    const std::function<std::optional<std::string>(const std::string&)>& env,
    const std::string& config_source) {
  std::vector<std::string> lines;
  const auto warn = [&](const std::string& variable, const std::string& ours) {
    const auto value = env(variable);
    if (!value || value->empty()) return;
    lines.push_back(variable + "=" + printable(*value, 64) +
                    " is NVIDIA's plugin's variable, not read here: set " + ours + " in " +
                    config_source);
  };
  for (const auto& o : kOptions) warn(o.variable, o.ours);
  for (const char* variable : kHealthVariables)
    warn(variable, "[device-plugin] health (true or false)");
  return lines;
}

}  // namespace gcr
