// gpu-ctk doctor --run: one throw-away container through our shim and the real low-level runtime,
// from a rootfs built here (the host's static busybox, nothing from any image), asking for
// GPU 0 with NVIDIA_VISIBLE_DEVICES; reports the GPU nodes the container saw.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

// `runtime`: the low-level runtime the runtime checks resolved (none: a FAIL here too).
void check_run(const Config& config, const std::optional<std::string>& runtime,
               const std::string& shim_path, Findings& findings);

}  // namespace gcr
