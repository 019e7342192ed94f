// Devices an image turns on by name, as NVIDIA's runtime does: NVIDIA_GDS, NVIDIA_MOFED,
// NVIDIA_GDRCOPY and NVIDIA_NVSWITCH set to `enabled` in a container that asks for GPUs.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "driver_host.h"
#include "edits.h"
#include "result.h"

namespace gcr {

enum class GatedFeature { kGds, kMofed, kGdrcopy, kNvswitch };

inline constexpr GatedFeature kAllGatedFeatures[] = {
    GatedFeature::kGds, GatedFeature::kMofed, GatedFeature::kGdrcopy, GatedFeature::kNvswitch};

// NVIDIA_GDS, ...
[[nodiscard]] const char* gated_feature_variable(GatedFeature feature);

// The feature's device nodes (GDS: /dev/nvidia-fs*, plus /run/udev and /etc/cufile.json from
// the driver root when present; MOFED: /dev/infiniband/uverbs* and rdma_cm; GDRCOPY:
// /dev/gdrdrv; NVSWITCH: /dev/nvidia-nvswitch*). None found is an error naming what is
// missing, which the caller reports as a warning: like NVIDIA's runtime, the container starts
// without the feature.
[[nodiscard]] Result<ContainerEdits> gated_feature_edits(GatedFeature feature, DriverHost& host);

}  // namespace gcr
