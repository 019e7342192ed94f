// cgroup v2 with systemd: each NVIDIA device node needs its /dev/char/<major>:<minor> link, or
// the next `systemctl daemon-reload` takes the GPUs from running containers.
#pragma once

#include "config/config.h"
#include "doctor/check.h"

namespace gcr {

// Reads the dev root as the host's / (sys/fs/cgroup, dev/char, the nodes): on a cgroup v1 or
// hybrid host (no sys/fs/cgroup/cgroup.controllers), or without NVIDIA nodes, nothing is said.
void check_dev_char(const Config& config, Findings& findings);

}  // namespace gcr
