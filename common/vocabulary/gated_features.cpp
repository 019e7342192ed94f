#include "vocabulary/gated_features.h"

namespace gcr {

const char* gated_feature_variable(GatedFeature feature) {
  switch (feature) {
    case GatedFeature::kGds:
      return "NVIDIA_GDS";
    case GatedFeature::kMofed:
      return "NVIDIA_MOFED";
    case GatedFeature::kGdrcopy:
      return "NVIDIA_GDRCOPY";
    case GatedFeature::kNvswitch:
      break;
  }
  return "NVIDIA_NVSWITCH";
}

}  // namespace gcr
