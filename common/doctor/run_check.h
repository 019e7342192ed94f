// gpu-ctk doctor --run: real work on the node's GPUs. For each GPU (or those named) one
// throw-away container through our shim and the real low-level runtime, from a rootfs built
// here (the host's static busybox, the host's glibc and our gpu-cuda-probe: nothing from any
// image), asking for that GPU with the compute and utility capabilities. The probe loads the
// injected libcuda, JIT-compiles and runs a kernel, checks its answers and allocates memory;
// each of its steps becomes a line. Under sharing = "mps" the container is a client of its GPU's
// one-share daemon, as a pod would be, and the probe prints the limits it got.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

struct RunCheck {
  std::optional<std::string> runtime;  // the low-level runtime the runtime checks resolved
  std::string shim_path;
  std::string probe_path;
  std::vector<std::string> gpus;  // as NVIDIA_VISIBLE_DEVICES names them; none: every GPU
};

void check_run(const Config& config, const RunCheck& run, Findings& findings);

}  // namespace gcr
