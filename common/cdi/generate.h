// A CDI spec for the host's GPUs, from the same discovery the shim uses (gpu-ctk cdi generate).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "cdi/spec.h"
#include "config/config.h"
#include "driver/host.h"

namespace gcr {

// How the devices are named (NVIDIA's --device-name-strategy): `index` (0), `uuid`
// (GPU-<uuid>), `type-index` (gpu0); each strategy given adds one device per GPU.
struct CdiNaming {
  std::vector<std::string> strategies = {"index", "uuid"};
  bool all_device = true;  // a device "all" with every GPU
};

// Whether `strategy` is one generate_cdi_spec knows.
[[nodiscard]] bool is_cdi_name_strategy(const std::string& strategy);

// Devices: one per GPU and naming strategy (its node and DRM nodes), plus "all";
// the spec's own edits hold what every GPU needs (control nodes, libraries, binaries, IPC and
// graphics configuration of every capability, firmware, the hooks). Device nodes carry only
// their paths: numbers are read from the host when the spec is applied, so the spec does not
// go stale when majors change.
[[nodiscard]] Result<CdiSpec> generate_cdi_spec(DriverHost& host, const Config& config,
                                                const std::string& kind,
                                                const CdiNaming& naming = {});

}  // namespace gcr
