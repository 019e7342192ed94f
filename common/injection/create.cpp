#include "injection/create.h"

#include "base/node_stat.h"
#include "base/step_clock.h"
#include "base/text.h"
#include "base/trust.h"
#include "discovery_cache/proc_files.h"
#include "driver/files.h"
#include "driver/host.h"
#include "driver/probe.h"
#include "injection/app_profile_at_create.h"
#include "injection/gpu_injection.h"
#include "injection/libraries_at_create.h"
#include "oci/spec_io.h"
#include "oci/spec_view.h"
#include "request/request.h"

namespace gcr {
namespace {

std::size_t array_size(const Json& spec, const Json::json_pointer& at) {
  return spec.contains(at) && spec.at(at).is_array() ? spec.at(at).size() : 0;
}

// What was asked: the driver capabilities apply to GPUs named by ID (and to `none`); a CDI
// device brings whatever its spec's edits hold, which the capabilities do not filter.
std::string requested(const GpuRequest& request) {
  std::string what = request.live() ? request.capabilities.to_string() : "";
  if (!request.cdi_names.empty()) {
    what += (what.empty() ? "" : "; ") + std::string("CDI devices ") +
            join(request.cdi_names, ",") + ", with their specs' edits";
  }
  return what;
}

std::string summary(const GpuRequest& request, const Json& spec) {
  return "GPU request (" + requested(request) + "): spec now has " +
         std::to_string(array_size(spec, Json::json_pointer("/linux/devices"))) + " devices and " +
         std::to_string(array_size(spec, Json::json_pointer("/mounts"))) + " mounts";
}

// The host's driver version when the container gets the live driver's libcuda (the compute
// capability's libraries).
std::optional<std::string> live_driver_version(const GpuRequest& request, DriverHost& host) {
  if (!request.live() || !needs_compute_libraries(request.capabilities)) return std::nullopt;
  auto version = host.devices().version();
  return version ? std::optional<std::string>(*version) : std::nullopt;
}

}  // namespace

bool bundle_may_ask_under_any_config(const std::string& bundle) {
  auto text = read_bundle_text(bundle);
  if (!text) return true;
  auto may_ask = bundle_has_string(*text, could_be_request_part_of_any_config);
  return !may_ask || *may_ask;
}

Status prepare_container(const RuncArgs& runc, const Config& config, const Logger& logger,
                         StepClock& clock) {
  auto text = read_bundle_text(runc.bundle);
  if (!text) return text.error();
  // Most specs name nothing a request is made of: they are checked as strictly, but no
  // document is built (a pod's spec can carry a megabyte of annotations or environment).
  auto may_ask = bundle_has_string(
      *text, [&](std::string_view s) { return could_be_request_part(s, config); });
  if (!may_ask) return may_ask.error();
  if (!*may_ask) {
    logger.debug("no GPU requested; " + text->path + " left untouched");
    return {};
  }
  auto bundle = parse_bundle_spec(std::move(*text));
  if (!bundle) return bundle.error();
  auto view = view_spec(bundle->spec);
  if (!view) {
    // We cannot read the request the way runc reads the spec, so we grant nothing: runc gets
    // the bundle untouched and judges the spec itself.
    logger.warning(view.error().message + " (" + bundle->path +
                   "): no GPU given, spec left untouched");
    return {};
  }
  auto request = read_gpu_request(*view, config, logger);
  if (!request) return request.error().wrap("cannot give the container its GPUs");
  if (!*request) {
    logger.debug("no GPU requested; " + bundle->path + " left untouched");
    return {};
  }
  clock.mark("request");
  DriverHost host(config.driver, lstat_node);
  KeptProcFiles kept_proc_files(config.runtime.state_dir);
  host.devices().keep_proc_files_in(kept_proc_files);
  CtkProbe probe(config);
  CtkCdiResolver cdi(config);
  const NodeStatFn stat = lstat_node;
  TrustCheck hook_trust;
  const InjectionSources sources{host, probe, cdi, stat, hook_trust, logger};
  auto edits = gather_edits(**request, config, sources);
  if (!edits) return edits.error().wrap("cannot give the container its GPUs");
  clock.mark("discovery");
  // The spec read is not needed again: what is written is the edited one, or nothing.
  auto edited = apply_gathered_edits(std::move(bundle->spec), *edits, config, sources);
  if (!edited) return edited.error().wrap("cannot give the container its GPUs");
  clock.mark("edits");
  Json& spec = edited->spec;
  ContainerRootFs root(spec, runc.bundle);
  put_cuda_compat_first(spec, edits->libraries, root, config, live_driver_version(**request, host),
                        logger);
  write_app_profile_at_create(spec, root, config, logger);
  run_library_hook_at_create(spec, edits->libraries, edited->first_edit_hook, root, config, logger);
  clock.mark("loader cache");
  if (auto s = write_bundle_spec(*bundle, spec); !s) return s;
  clock.mark("write");
  logger.info(summary(**request, spec));
  if (logger.enabled(LogLevel::kDebug)) logger.debug("create steps: " + clock.summary());
  return {};
}

}  // namespace gcr
