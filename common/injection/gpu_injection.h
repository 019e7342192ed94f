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
#include "injection/live_edits.h"
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
// (the GPUs chosen, the requirements checked, the driver files found) and the live driver's
// libraries request. Unqualified IDs are resolved against the live driver, qualified names
// through CDI; both become one set of edits.
[[nodiscard]] Result<GatheredEdits> gather_edits(const GpuRequest& request, const Config& config,
                                                 const InjectionSources& sources);

// A spec with the edits applied, and where in its createContainer hooks the edits' own begin:
// where the update-libraries hook goes when the shim leaves the work to it.
struct EditedSpec {
  Json spec;
  std::size_t first_edit_hook = 0;
};

// The edits applied once, to `spec` (hook programs checked first, with [hooks] ctk-path when
// there is a libraries request: the hook's program, should it be needed). Pass a copy to keep
// the original.
[[nodiscard]] Result<EditedSpec> apply_gathered_edits(Json spec, const GatheredEdits& gathered,
                                                      const Config& config,
                                                      const InjectionSources& sources);

}  // namespace gcr
