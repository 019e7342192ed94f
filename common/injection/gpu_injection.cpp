#include "injection/gpu_injection.h"

#include <algorithm>

#include "base/text.h"
#include "edits/apply.h"
#include "edits/injected_hooks.h"
#include "injection/live_edits.h"
#include "injection/policy.h"
#include "request/gpu_select.h"
#include "request/requirements_check.h"

namespace gcr {
namespace {

// Each GPU's MIG devices from NVML, asked only when an ID names a MIG device.
Result<std::optional<std::map<std::string, GpuFacts>>> mig_table(const GpuRequest& request,
                                                                 DriverProbe& probe) {
  if (std::none_of(request.device_ids.begin(), request.device_ids.end(), is_mig_id)) {
    return std::optional<std::map<std::string, GpuFacts>>();
  }
  auto facts = probe.gpu_facts();
  if (!facts) return facts.error();
  return std::optional<std::map<std::string, GpuFacts>>(std::move(*facts));
}

// The live driver's part: GPUs chosen by unqualified IDs (or none/all) and the driver files.
Result<GatheredEdits> live_part(const GpuRequest& request, const Config& config,
                                const InjectionSources& sources) {
  auto version = sources.host.devices().version();
  if (!version) return version.error();
  auto migs = mig_table(request, sources.probe);
  if (!migs) return migs.error().wrap(request.origin);
  auto selected = select_gpus(request, sources.host.devices(), *migs ? &**migs : nullptr);
  if (!selected) return selected.error().wrap(request.origin);
  if (auto s = check_requirements(request.requirements, selected->gpus, *version, sources.probe);
      !s)
    return s.error();
  return live_edits(request, *selected, sources.host, config);
}

// A request made only of CDI names still has its requirements checked, against the driver
// when there is one (without it the driver's facts are unknown, which counts as met).
Status check_cdi_only_requirements(const GpuRequest& request, const InjectionSources& sources) {
  if (request.requirements.empty()) return {};
  auto version = sources.host.devices().version();
  return check_requirements(request.requirements, {},
                            version ? std::optional<std::string>(*version) : std::nullopt,
                            sources.probe);
}

// How many createContainer hooks `spec` has.
std::size_t created_container_hooks(const Json& spec) {
  const Json::json_pointer at("/hooks/createContainer");
  return spec.contains(at) && spec.at(at).is_array() ? spec.at(at).size() : 0;
}

}  // namespace

Result<GatheredEdits> gather_edits(const GpuRequest& request, const Config& config,
                                   const InjectionSources& sources) {
  GatheredEdits gathered;
  ContainerEdits& edits = gathered.edits;
  if (request.live()) {
    auto part = live_part(request, config, sources);
    if (!part) return part.error();
    gathered = std::move(*part);
  } else if (auto s = check_cdi_only_requirements(request, sources); !s) {
    return s.error();
  }
  if (!request.cdi_names.empty()) {
    auto part = sources.cdi.resolve(request.cdi_names);
    if (!part) return part.error();
    if (auto s = request.privileged
                     ? Status{}
                     : check_no_mig_management(*part, sources.host.devices(), sources.stat);
        !s)
      return s.error().wrap(request.origin + ": " + join(request.cdi_names, ","));
    withhold_unsupported_capabilities(*part, config.requests.supported_capabilities,
                                      sources.logger);
    edits.append(*part);
  }
  if (!request.imex_channels.empty()) {
    auto part = imex_edits(request.imex_channels, sources.host);
    if (!part) return part.error();
    edits.append(*part);
  }
  for (GatedFeature feature : request.features) {
    auto part = gated_feature_edits(feature, sources.host);
    if (!part) {
      sources.logger.warning(part.error().message);
      continue;
    }
    edits.append(*part);
  }
  for (const auto& note : sources.host.notes().take()) sources.logger.warning(note);
  for (const auto& line : sources.host.notes().take_debug()) sources.logger.debug(line);
  return gathered;
}

Result<EditedSpec> apply_gathered_edits(Json spec, const GatheredEdits& gathered,
                                        const Config& config, const InjectionSources& sources) {
  if (auto s = check_hook_programs(gathered.edits, sources.hook_trust); !s) return s.error();
  if (auto s = gathered.libraries ? sources.hook_trust.program(config.hooks.ctk_path) : Status{};
      !s)
    return Error{"hook program refused: " + s.error().message};
  EditedSpec edited{std::move(spec), 0};
  remove_superseded_hooks(edited.spec, config.hooks);
  edited.first_edit_hook = created_container_hooks(edited.spec);
  std::vector<std::string> kept;
  if (auto s = apply_edits(edited.spec, gathered.edits, sources.stat, kept); !s) return s.error();
  for (const auto& destination : kept) {
    sources.logger.warning("the container's own mount at " + destination +
                           " is kept; the driver's file is not mounted there");
  }
  return edited;
}

}  // namespace gcr
