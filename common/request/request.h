// What a container asks for: which GPUs (by ID or CDI name), which driver capabilities,
// which requirements, read from annotations, volume-mount markers and the environment.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "log/log.h"
#include "oci/spec_view.h"
#include "request/requirement.h"
#include "vocabulary/capabilities.h"
#include "vocabulary/gated_features.h"

namespace gcr {

inline constexpr const char* kVisibleDevicesVar = "NVIDIA_VISIBLE_DEVICES";
inline constexpr const char* kVolumeMarkerDir = "/var/run/nvidia-container-devices";
inline constexpr const char* kImexChannelsVar = "NVIDIA_IMEX_CHANNELS";
inline constexpr const char* kCliHookOrigin = "ctr --gpus (nvidia-container-cli --device)";

struct GpuRequest {
  enum class Source { kAnnotation, kVolumeMount, kCliHook, kEnv };
  Source source = Source::kEnv;
  bool all = false;                     // every GPU
  std::vector<std::string> device_ids;  // unqualified IDs in request order, deduplicated
  std::vector<std::string> cdi_names;   // qualified CDI names in request order, deduplicated
  CapabilitySet capabilities;
  std::vector<Requirement> requirements;  // empty when requirements are disabled
  bool mig_config = false;
  bool mig_monitor = false;
  std::vector<unsigned> imex_channels;  // IMEX channel numbers in request order, deduplicated
  std::vector<GatedFeature> features;   // NVIDIA_GDS, ... = enabled

  // "none": the driver's files but no GPU.
  [[nodiscard]] bool no_gpu() const { return !all && device_ids.empty() && cdi_names.empty(); }
};

// nullopt when the container asks for nothing (runc then runs as if the shim were absent).
// Malformed requests are errors that name the offending value. The devices come from the first
// of: annotations, volume-mount markers (when accepted), containerd's --gpus hook, the
// environment. The hook is what `ctr run --gpus` was told on its command line, so it wins over
// NVIDIA_VISIBLE_DEVICES, which usually comes from the image (CUDA images set `all`).
[[nodiscard]] Result<std::optional<GpuRequest>> read_gpu_request(const SpecView& spec,
                                                                 const Config& config,
                                                                 const Logger& logger);

}  // namespace gcr
