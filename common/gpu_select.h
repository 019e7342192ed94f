// Matching requested device IDs against the host's GPUs.
#pragma once

#include <string>
#include <vector>

#include "driver_host.h"
#include "request.h"
#include "result.h"

namespace gcr {

// The GPUs a request names, in index order. An ID may be a GPU index, a GPU-<uuid> or a PCI
// bus id; one that matches no GPU is an error naming it (a request never widens to all GPUs).
[[nodiscard]] Result<std::vector<Gpu>> select_gpus(const GpuRequest& request,
                                                   const std::vector<Gpu>& gpus);

}  // namespace gcr
