// MPS, with [device-plugin] sharing = "mps": NVIDIA's control program in the driver root, the
// daemon gpu-device-plugin runs answering on its pipe, one share's limits as its defaults, and
// its servers and clients.
#pragma once

#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

void check_mps(const Config& config, Findings& findings);

}  // namespace gcr
