// NVIDIA's configuration left on a node whose NVIDIA packages ours replaced (a removed
// package keeps its conffile): what it asks for that our configuration does not hold.
#pragma once

#include <string>

#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

// `path` is NVIDIA's config.toml; nothing is said when there is none. A setting NVIDIA's file
// gives a value other than our default, and ours does not have, is named: FAIL where ours
// grants more (GPUs from the environment of unprivileged containers), warn otherwise.
void check_nvidia_config(const Config& ours, const std::string& path, Findings& findings);

}  // namespace gcr
