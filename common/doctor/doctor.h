// gpu-ctk doctor: walks the node and says why GPUs would not reach containers: the driver, our
// configuration and runtime, each container engine found (or named), CDI specs, Kubernetes, and
// optionally one real container. Every check reads through the configured driver and dev roots
// and the engine files given, so the same code checks real and simulated hosts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "compat/nvidia_config.h"
#include "config/config.h"
#include "doctor/check.h"
#include "engines/engines.h"

namespace gcr {

struct DoctorOptions {
  std::optional<std::string> config_path;  // as the shim finds it when not given
  std::vector<std::string> engines;        // docker | containerd | crio | podman; none: found ones
  std::string docker_config = default_engine_config("docker");
  std::string containerd_config = default_engine_config("containerd");
  std::string crio_config = default_engine_config("crio");
  std::string kubelet_config = "/var/lib/kubelet/config.yaml";
  std::string nvidia_config = kNvidiaConfigPath;  // NVIDIA's, if one is left
  std::string shim_path;          // the gpu-container-runtime installed beside gpu-ctk
  std::string probe_path;         // the gpu-cuda-probe installed with gpu-ctk
  bool run = false;               // start a throw-away container per GPU (or per GPU named)
  std::vector<std::string> gpus;  // as NVIDIA_VISIBLE_DEVICES names them; none: every GPU
};

[[nodiscard]] Findings run_doctor(const DoctorOptions& options);

}  // namespace gcr
