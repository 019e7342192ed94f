// From a GPU request to the edited spec: resolve the request against the driver, check the
// requirements, build the container edits and apply them, all in memory.
#pragma once

#include "base/node_stat.h"
#include "base/result.h"
#include "base/trust.h"
#include "config/config.h"
#include "driver/host.h"
#include "driver/probe.h"
#include "edits/edits.h"
#include "injection/cdi_resolver.h"
#include "injection/gated_devices.h"
#include "json/strict_json.h"
#include "log/log.h"
#include "request/request.h"

namespace gcr {

// The outside world injection consults.
struct InjectionSources {
  DriverHost& host;
  DriverProbe& probe;
  CdiResolver& cdi;
  const NodeStatFn& stat;
  FileTrust& hook_trust;  // judges the programs of the edits' hooks
  const Logger& logger;   // for what is skipped rather than failed
};

// Discovery: what the request asks of the live driver and the CDI specs, as container edits
// (the GPUs chosen, the requirements checked, the driver files found). Unqualified IDs are
// resolved against the live driver, qualified names through CDI; both become one set of edits.
[[nodiscard]] Result<ContainerEdits> gather_edits(const GpuRequest& request, const Config& config,
                                                  const InjectionSources& sources);

// The edits applied once, to a copy of `spec` (hook programs checked first); `spec` itself is
// never touched.
[[nodiscard]] Result<Json> apply_gathered_edits(const Json& spec, const ContainerEdits& edits,
                                                const Config& config,
                                                const InjectionSources& sources);

}  // namespace gcr
