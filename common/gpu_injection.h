// From a GPU request to the edited spec: resolve the request against the driver, check the
// requirements, build the container edits and apply them, all in memory.
#pragma once

#include "cdi_resolver.h"
#include "config.h"
#include "driver_host.h"
#include "driver_probe.h"
#include "log.h"
#include "node_stat.h"
#include "request.h"
#include "result.h"
#include "strict_json.h"

namespace gcr {

// The outside world injection consults.
struct InjectionSources {
  DriverHost& host;
  DriverProbe& probe;
  CdiResolver& cdi;
  const NodeStatFn& stat;
  const Logger& logger;  // for what is skipped rather than failed
};

// Returns the edited copy of `spec`; `spec` itself is never touched. Unqualified IDs are
// resolved against the live driver, qualified names through CDI; both become one set of
// edits applied once.
[[nodiscard]] Result<Json> inject_gpus(const Json& spec, const GpuRequest& request,
                                       const Config& config, const InjectionSources& sources);

}  // namespace gcr
