// Devices an image turns on by name, as NVIDIA's runtime does: NVIDIA_GDS, NVIDIA_MOFED,
// NVIDIA_GDRCOPY and NVIDIA_NVSWITCH set to `enabled` in a container that asks for GPUs.
#pragma once

namespace gcr {

enum class GatedFeature { kGds, kMofed, kGdrcopy, kNvswitch };

inline constexpr GatedFeature kAllGatedFeatures[] = {
    GatedFeature::kGds, GatedFeature::kMofed, GatedFeature::kGdrcopy, GatedFeature::kNvswitch};

// NVIDIA_GDS, ...
[[nodiscard]] const char* gated_feature_variable(GatedFeature feature);

}  // namespace gcr
