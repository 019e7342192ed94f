// What an engine's configuration says about GPU runtimes, read from its files (pure: text in,
// facts out, so each engine's rules are tested without the engine).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace gcr {

struct EngineRuntime {
  std::string path;                    // the executable ("" for containerd: runc from PATH)
  std::optional<bool> systemd_cgroup;  // containerd's SystemdCgroup option, when set
};

struct EngineFacts {
  std::map<std::string, EngineRuntime> runtimes;  // by name
  std::string default_runtime;                    // "" when the engine's own default applies
  std::string runtimes_table;                     // containerd: the TOML table its runtimes are in
  std::string cri_disabled;  // containerd: the disabled_plugins entry that turns CRI off, if any
};

// Docker's daemon.json: "runtimes" {name: {"path"}} and "default-runtime" (default runc).
[[nodiscard]] Result<EngineFacts> docker_facts(const std::string& daemon_json);

// containerd's effective configuration (`containerd config dump`, or a file): the CRI plugin's
// runtimes (BinaryName, SystemdCgroup) and default_runtime_name, in the CRI plugin of the file's
// `version` (1 when unset, 2, 3).
[[nodiscard]] Result<EngineFacts> containerd_facts(const std::string& toml_text,
                                                   const std::string& source);

// CRI-O's files in the order CRI-O reads them (crio.conf, then crio.conf.d/*.conf by name):
// [crio.runtime] default_runtime and [crio.runtime.runtimes.<name>] runtime_path; later files
// win key by key.
[[nodiscard]] Result<EngineFacts> crio_facts(
    const std::vector<std::pair<std::string, std::string>>& files);  // (path, text)

// The kubelet's cgroupDriver from its KubeletConfiguration YAML ("cgroupfs" when unset, the
// kubelet's default).
[[nodiscard]] Result<std::string> kubelet_cgroup_driver(const std::string& yaml_text);

// A `major.minor` release from what `kubelet --version` or `containerd --version` prints
// ("Kubernetes v1.20.2", "containerd github.com/containerd/containerd 1.6.20~ds1 ...").
struct Release {
  unsigned major = 0;
  unsigned minor = 0;
  friend auto operator<=>(const Release&, const Release&) = default;
};
[[nodiscard]] Result<Release> kubelet_release(const std::string& version_output);
[[nodiscard]] Result<Release> containerd_release(const std::string& version_output);

// Whether the kubelet hands a device plugin's cdi_devices to the runtime (KEP-4009): from 1.29
// on, in 1.28 only with the DevicePluginCDIDevices feature gate on in its configuration
// (`featureGates`), never before. "" when it does, else why not.
[[nodiscard]] std::string kubelet_lacks_cdi_devices(const Release& kubelet,
                                                    const std::string& kubelet_yaml);
// Whether containerd applies CDI devices from the CRI: from 1.7 on (with enable_cdi). "" when
// it does, else why not.
[[nodiscard]] std::string containerd_lacks_cdi_devices(const Release& containerd);

}  // namespace gcr
