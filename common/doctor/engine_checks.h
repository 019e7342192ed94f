// The container engines: whether each registers our runtime with a path that exists, whether
// it is the default (what `--gpus`, the device plugin and Kubernetes need), containerd's
// SystemdCgroup against the kubelet's cgroupDriver, and podman's CDI specs.
#pragma once

#include <string>
#include <vector>

#include "cdi/registry.h"
#include "config/config.h"
#include "doctor/check.h"
#include "doctor/doctor.h"

namespace gcr {

// The engines `options.engines` names, else those installed here (their program in PATH or
// their configuration file present).
[[nodiscard]] std::vector<std::string> engines_to_check(const DoctorOptions& options);

void check_docker(const DoctorOptions& options, Findings& findings);
void check_containerd(const DoctorOptions& options, Findings& findings);
void check_crio(const DoctorOptions& options, Findings& findings);
void check_podman(const Config& config, const CdiRegistry& registry, Findings& findings);

// An engine's runtime path is ours: it resolves to gpu-container-runtime (any compatibility
// link to it included) or to the same file as `shim_path`.
[[nodiscard]] bool is_our_runtime(const std::string& path, const std::string& shim_path);

}  // namespace gcr
