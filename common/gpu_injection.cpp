#include "gpu_injection.h"

#include "apply.h"
#include "gpu_select.h"
#include "injected_hooks.h"
#include "live_edits.h"
#include "requirements_check.h"
#include "text.h"

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

}  // namespace

Result<Json> inject_gpus(const Json& spec, const GpuRequest& request, const Config& config,
                         DriverHost& host, DriverProbe& probe, const NodeStatFn& stat) {
  if (!request.cdi_names.empty()) {
    return Error{"CDI device names are not supported yet: " +
                 printable(join(request.cdi_names, ", "), 256)};
  }
  auto version = host.version();
  if (!version) return version.error();
  auto gpus = host.gpus();
  if (!gpus) return gpus.error();
  auto selected = select_gpus(request, *gpus);
  if (!selected) return selected.error().wrap(origin_of(request));
  if (auto s = check_requirements(request.requirements, *selected, *version, probe); !s)
    return s.error();
  auto edits = live_edits(request, *selected, host, config);
  if (!edits) return edits.error();
  Json edited = spec;
  remove_superseded_hooks(edited, config.hooks);
  if (auto s = apply_edits(edited, *edits, stat); !s) return s.error();
  return edited;
}

}  // namespace gcr
