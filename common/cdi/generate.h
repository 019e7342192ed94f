// A CDI spec for the host's GPUs, from the same discovery the shim uses (gpu-ctk cdi generate).
#pragma once

#include <string>

#include "base/result.h"
#include "cdi/spec.h"
#include "config/config.h"
#include "driver/host.h"

namespace gcr {

// Devices: one per GPU named by index and one by UUID (its node and DRM nodes), plus "all";
// the spec's own edits hold what every GPU needs (control nodes, libraries, binaries, IPC and
// graphics configuration of every capability, firmware, the hooks). Device nodes carry only
// their paths: numbers are read from the host when the spec is applied, so the spec does not
// go stale when majors change.
[[nodiscard]] Result<CdiSpec> generate_cdi_spec(DriverHost& host, const Config& config,
                                                const std::string& kind);

}  // namespace gcr
