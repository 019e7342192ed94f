#include "gpu_injection.h"

#include "apply.h"
#include "gpu_select.h"
#include "injected_hooks.h"
#include "live_edits.h"
#include "requirements_check.h"

namespace gcr {
namespace {

std::string origin_of(const GpuRequest& request) {
  switch (request.source) {
    case GpuRequest::Source::kAnnotation:
      return "annotations";
    case GpuRequest::Source::kVolumeMount:
      return kVolumeMarkerDir;
    case GpuRequest::Source::kEnv:
      return kVisibleDevicesVar;
  }
  return "";
}

// The live driver's part: GPUs chosen by unqualified IDs (or none/all) and the driver files.
Result<ContainerEdits> live_part(const GpuRequest& request, const Config& config,
                                 const InjectionSources& sources) {
  auto version = sources.host.version();
  if (!version) return version.error();
  auto gpus = sources.host.gpus();
  if (!gpus) return gpus.error();
  auto selected = select_gpus(request, *gpus);
  if (!selected) return selected.error().wrap(origin_of(request));
  if (auto s = check_requirements(request.requirements, *selected, *version, sources.probe); !s)
    return s.error();
  return live_edits(request, *selected, sources.host, config);
}

// A request made only of CDI names still has its requirements checked, against the driver
// when there is one (without it the driver's facts are unknown, which counts as met).
Status check_cdi_only_requirements(const GpuRequest& request, const InjectionSources& sources) {
  if (request.requirements.empty()) return {};
  auto version = sources.host.version();
  return check_requirements(request.requirements, {},
                            version ? std::optional<std::string>(*version) : std::nullopt,
                            sources.probe);
}

}  // namespace

Result<Json> inject_gpus(const Json& spec, const GpuRequest& request, const Config& config,
                         const InjectionSources& sources) {
  ContainerEdits edits;
  const bool live = request.all || !request.device_ids.empty() || request.no_gpu();
  if (live) {
    auto part = live_part(request, config, sources);
    if (!part) return part.error();
    edits.append(*part);
  } else if (auto s = check_cdi_only_requirements(request, sources); !s) {
    return s.error();
  }
  if (!request.cdi_names.empty()) {
    auto part = sources.cdi.resolve(request.cdi_names);
    if (!part) return part.error();
    edits.append(*part);
  }
  Json edited = spec;
  remove_superseded_hooks(edited, config.hooks);
  if (auto s = apply_edits(edited, edits, sources.stat); !s) return s.error();
  return edited;
}

}  // namespace gcr
