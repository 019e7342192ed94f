// What `create` and `run` add to the bundle before runc sees it.
#pragma once

#include "base/result.h"
#include "base/step_clock.h"
#include "config/config.h"
#include "log/log.h"
#include "oci/runc_args.h"

namespace gcr {

// Reads the bundle's config.json; if the container asks for GPUs, edits it in memory and
// writes it back once, atomically. Any error leaves config.json byte-identical. For a GPU
// request, `clock` gets a mark after each step (request, discovery, edits, loader cache, write),
// and at debug level their times are logged.
[[nodiscard]] Status prepare_container(const RuncArgs& runc, const Config& config,
                                       const Logger& logger, StepClock& clock);

// Whether the bundle's config.json could ask for GPUs under any configuration (for when the
// configuration cannot be read): true also when the file cannot be read.
[[nodiscard]] bool bundle_may_ask_under_any_config(const std::string& bundle);

}  // namespace gcr
