// gpu-ctk doctor: walks the node and says why GPUs would not reach containers: the driver, our
// configuration and runtime, each container engine found (or named), CDI specs, Kubernetes, and
// optionally one real container. Every check reads through the configured driver and dev roots
// and the engine files given, so the same code checks real and simulated hosts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

struct DoctorOptions {
  std::optional<std::string> config_path;  // as the shim finds it when not given
  std::vector<std::string> engines;        // docker | containerd | crio | podman; none: found ones
  std::string docker_config = "/etc/docker/daemon.json";
  std::string containerd_config = "/etc/containerd/config.toml";
  std::string crio_config = "/etc/crio/crio.conf";
  std::string kubelet_config = "/var/lib/kubelet/config.yaml";
  std::string shim_path;  // the gpu-container-runtime installed beside gpu-ctk
  bool run = false;       // start a throw-away container
};

[[nodiscard]] Findings run_doctor(const DoctorOptions& options);

}  // namespace gcr
