// What `create` and `run` add to the bundle before runc sees it.
#pragma once

#include "base/result.h"
#include "config/config.h"
#include "log/log.h"
#include "oci/runc_args.h"

namespace gcr {

// Reads the bundle's config.json; if the container asks for GPUs, edits it in memory and
// writes it back once, atomically. Any error leaves config.json byte-identical.
[[nodiscard]] Status prepare_container(const RuncArgs& runc, const Config& config,
                                       const Logger& logger);

}  // namespace gcr
