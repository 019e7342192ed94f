// The device nodes and files of the features an image turns on by name (NVIDIA_GDS=enabled, ...).
#pragma once

#include "base/result.h"
#include "driver/host.h"
#include "edits/edits.h"
#include "vocabulary/gated_features.h"

namespace gcr {

// The feature's device nodes (GDS: /dev/nvidia-fs*, plus /run/udev and /etc/cufile.json from
// the driver root when present; MOFED: /dev/infiniband/uverbs* and rdma_cm; GDRCOPY:
// /dev/gdrdrv; NVSWITCH: /dev/nvidia-nvswitch*). None found is an error naming what is
// missing, which the caller reports as a warning: like NVIDIA's runtime, the container starts
// without the feature.
[[nodiscard]] Result<ContainerEdits> gated_feature_edits(GatedFeature feature, DriverHost& host);

}  // namespace gcr
