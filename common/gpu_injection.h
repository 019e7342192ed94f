// From a GPU request to the edited spec: resolve the request against the driver, check the
// requirements, build the container edits and apply them, all in memory.
#pragma once

#include "config.h"
#include "driver_host.h"
#include "driver_probe.h"
#include "node_stat.h"
#include "request.h"
#include "result.h"
#include "strict_json.h"

namespace gcr {

// Returns the edited copy of `spec`; `spec` itself is never touched.
[[nodiscard]] Result<Json> inject_gpus(const Json& spec, const GpuRequest& request,
                                       const Config& config, DriverHost& host, DriverProbe& probe,
                                       const NodeStatFn& stat);

}  // namespace gcr
