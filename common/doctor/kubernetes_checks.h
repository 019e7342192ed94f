// Kubernetes: the kubelet's socket and a device plugin's in the kubelet's device-plugin
// directory (when the node has one), and whether the plugin's device-list strategy hands pods
// their GPUs in a form the runtime's [requests] settings accept, and (cdi-cri) that the node's
// kubelet and containerd are recent enough to pass CDI devices on.
#pragma once

#include "config/config.h"
#include "doctor/check.h"
#include "doctor/doctor.h"

namespace gcr {

void check_kubernetes(const Config& config, const DoctorOptions& options, Findings& findings);

}  // namespace gcr
