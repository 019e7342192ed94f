// What a container asks for: which GPUs (by ID or CDI name), which driver capabilities,
// which requirements, read from annotations, volume-mount markers and the environment.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "log/log.h"
#include "oci/spec_view.h"
#include "request/requirement.h"
#include "vocabulary/capabilities.h"
#include "vocabulary/gated_features.h"
#include "vocabulary/request_names.h"

namespace gcr {

inline constexpr const char* kCliHookOrigin = "ctr --gpus (nvidia-container-cli --device)";

struct GpuRequest {
  enum class Source { kAnnotation, kVolumeMount, kCliHook, kEnv };
  Source source = Source::kEnv;
  // Where the devices were named, for messages: "annotations", the marker folder, the hook's
  // flag, NVIDIA_VISIBLE_DEVICES or the Swarm variables set.
  std::string origin = kVisibleDevicesVar;
  bool all = false;                     // every GPU
  std::vector<std::string> device_ids;  // unqualified IDs in request order, deduplicated
  std::vector<std::string> cdi_names;   // qualified CDI names in request order, deduplicated
  CapabilitySet capabilities;
  std::vector<Requirement> requirements;  // empty when requirements are disabled
  bool mig_config = false;
  bool mig_monitor = false;
  std::vector<unsigned> imex_channels;  // IMEX channel numbers in request order, deduplicated
  std::vector<GatedFeature> features;   // NVIDIA_GDS, ... = enabled
  bool privileged = false;              // CAP_SYS_ADMIN in the container's bounding set

  // "none": the driver's files but no GPU.
  [[nodiscard]] bool no_gpu() const { return !all && device_ids.empty() && cdi_names.empty(); }
  // Something resolved from the live driver, to which the capabilities apply: all, IDs or none.
  [[nodiscard]] bool live() const { return all || !device_ids.empty() || no_gpu(); }
};

// nullopt when the container asks for nothing (runc then runs as if the shim were absent).
// Malformed requests are errors that name the offending value. The devices come from the first
// of: annotations, volume-mount markers (when accepted), containerd's --gpus hook, the
// environment. The hook is what `ctr run --gpus` was told on its command line, so it wins over
// NVIDIA_VISIBLE_DEVICES, which usually comes from the image (CUDA images set `all`).
[[nodiscard]] Result<std::optional<GpuRequest>> read_gpu_request(const SpecView& spec,
                                                                 const Config& config,
                                                                 const Logger& logger);

// Whether a string of a spec (a key or a value) could be part of a request: an NVIDIA_*
// variable, a configured Swarm resource variable, a key with a configured annotation prefix, a
// volume-mount marker or containerd's --gpus hook (both name "nvidia-container"). A spec in
// which no string could be has no request, whatever its shape, so it need not be read further.
[[nodiscard]] bool could_be_request_part(std::string_view text, const Config& config);

// The same, nearly, whatever the configuration says (when it cannot be read): the default's
// parts, any string holding a qualified CDI name, which any annotation prefix's value would, and
// Docker Swarm's variables (DOCKER_RESOURCE_*; a swarm-resource name of another form is not
// known then).
[[nodiscard]] bool could_be_request_part_of_any_config(std::string_view text);

}  // namespace gcr
