// Container edits for a request resolved against the live driver: device nodes, driver files
// of the granted capabilities, IPC endpoints, firmware and the ld-cache / symlink hooks.
#pragma once

#include <vector>

#include "config.h"
#include "driver_host.h"
#include "edits.h"
#include "request.h"
#include "result.h"

namespace gcr {

[[nodiscard]] Result<ContainerEdits> live_edits(const GpuRequest& request,
                                                const std::vector<Gpu>& selected, DriverHost& host,
                                                const Config& config);

}  // namespace gcr
