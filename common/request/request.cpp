#include "request/request.h"

#include <algorithm>
#include <cstdint>
#include <set>

#include "base/text.h"
#include "request/cli_hook.h"
#include "vocabulary/cdi_name.h"

namespace gcr {
namespace {

constexpr const char* kCapabilitiesVar = "NVIDIA_DRIVER_CAPABILITIES";
constexpr const char* kRequirePrefix = "NVIDIA_REQUIRE_";
// What Docker Swarm names a generic resource's variable with (DOCKER_RESOURCE_<resource>).
constexpr const char* kSwarmVariablePrefix = "DOCKER_RESOURCE_";
constexpr const char* kJetpackPrefix = "NVIDIA_REQUIRE_JETPACK";
constexpr std::uint64_t kMaxImexChannel = (1u << 20) - 1;

std::optional<std::string> env_value(const SpecView& spec, const std::string& name) {
  const auto it = spec.env.find(name);
  if (it == spec.env.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> comma_list(std::string_view value) {
  std::vector<std::string> out;
  for (auto item : split(value, ',')) {
    const auto t = trim(item);
    if (!t.empty()) out.emplace_back(t);
  }
  return out;
}

// The annotations whose key has a configured prefix, in key order.
std::vector<const std::pair<std::string, std::string>*> our_annotations(const SpecView& spec,
                                                                        const Config& config) {
  std::vector<const std::pair<std::string, std::string>*> ours;
  for (const auto& annotation : spec.annotations) {
    const auto& prefixes = config.requests.annotation_prefixes;
    if (std::any_of(prefixes.begin(), prefixes.end(),
                    [&](const std::string& p) { return annotation.first.rfind(p, 0) == 0; }))
      ours.push_back(&annotation);
  }
  std::sort(ours.begin(), ours.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  return ours;
}

// CDI names from annotations whose key has a configured prefix, keys in sorted order.
Result<std::vector<std::string>> annotation_names(const SpecView& spec, const Config& config) {
  std::vector<std::string> names;
  for (const auto* annotation : our_annotations(spec, config)) {
    const std::string& key = annotation->first;
    for (const auto& name : comma_list(annotation->second)) {
      if (!parse_qualified_name(name)) {
        return Error{"annotation " + printable(key, 128) + ": `" + printable(name, 128) +
                     "` is not a qualified CDI device name"};
      }
      // An annotation names devices of spec files the administrator installed; a live GPU is
      // asked for where the privilege rule of the environment's requests holds.
      if (name.starts_with(kJitCdiPrefix)) {
        return Error{"annotation " + printable(key, 128) + ": `" + printable(name, 128) +
                     "`: " + std::string(kJitCdiPrefix) +
                     "<id> names are accepted in the environment's device list only"};
      }
      names.push_back(name);
    }
  }
  return names;
}

// The unprivileged policy for requests made through the environment: honoured when the
// container has CAP_SYS_ADMIN in its bounding set or the configuration accepts them anyway;
// otherwise ignored with a warning naming the variable.
bool env_request_allowed(const SpecView& spec, const Config& config, const Logger& logger,
                         std::string_view variable) {
  if (spec.privileged || config.requests.accept_env_when_unprivileged) return true;
  logger.warning(std::string(variable) +
                 " ignored: the container is not privileged and [requests] "
                 "accept-env-when-unprivileged is false");
  return false;
}

// What follows /var/run/nvidia-container-devices/ in each /dev/null mount there, where the
// device plugin marks what it allocated; each destination once.
std::vector<std::string> volume_markers(const SpecView& spec) {
  std::vector<std::string> markers;
  std::set<std::string> seen_destinations;
  for (const auto& m : spec.mounts) {
    const std::string destination = clean_path(m.destination);
    if (clean_path(m.source) != "/dev/null" || destination == kVolumeMarkerDir ||
        !path_is_under(destination, kVolumeMarkerDir) ||
        !seen_destinations.insert(destination).second) {
      continue;
    }
    markers.push_back(destination.substr(std::string_view(kVolumeMarkerDir).size() + 1));
  }
  return markers;
}

// Device IDs from the markers: <id>, and cdi/<vendor>/<class>/<name> or
// cdi/<vendor>/<class>=<name> for a CDI name (NVIDIA's plugin writes either).
std::vector<std::string> volume_marker_ids(const SpecView& spec) {
  std::vector<std::string> ids;
  for (const auto& marker : volume_markers(spec)) {
    const auto parts = split(marker, '/');
    if (parts.size() == 4 && parts[0] == "cdi") {
      ids.push_back(std::string(parts[1]) + "/" + std::string(parts[2]) + "=" +
                    std::string(parts[3]));
    } else if (parts.size() == 3 && parts[0] == "cdi" && parts[2].find('=') != parts[2].npos) {
      ids.push_back(marker.substr(4));
    } else if (parts.size() == 1) {
      ids.push_back(marker);
    }
  }
  return ids;
}

// IMEX channels from the markers: imex/<channel>.
std::vector<std::string> volume_marker_channels(const SpecView& spec) {
  std::vector<std::string> channels;
  for (const auto& marker : volume_markers(spec)) {
    const auto parts = split(marker, '/');
    if (parts.size() == 2 && parts[0] == kImexMarkerFolder) channels.emplace_back(parts[1]);
  }
  return channels;
}

// Sorts tokens into the request; false when the request is "void" (nothing).
Result<bool> classify(const std::vector<std::string>& tokens, const std::string& origin,
                      GpuRequest& request) {
  std::set<std::string> seen;
  bool none = false;
  for (const auto& listed : tokens) {
    if (listed == "void") return false;
    // NVIDIA's just-in-time name of a live GPU is that GPU's ID (`void` or a CDI name after
    // its prefix names no GPU: said so where IDs are matched).
    const bool jit = listed.starts_with(kJitCdiPrefix);
    const std::string token = jit ? listed.substr(kJitCdiPrefix.size()) : listed;
    if (!seen.insert(token).second) continue;
    if (token == "none") {
      none = true;
    } else if (iequals(token, "all")) {
      request.all = true;
    } else if (!jit && parse_qualified_name(token)) {
      request.cdi_names.push_back(token);
    } else {
      request.device_ids.push_back(token);
    }
  }
  if (none && seen.size() > 1)
    return Error{origin + ": `none` cannot be combined with other devices"};
  return true;
}

// [requests] mode = "cdi": unqualified IDs name devices of [cdi] default-kind.
void qualify_ids(GpuRequest& request, const std::string& kind) {
  const bool none = request.no_gpu();
  std::vector<std::string> ids = std::move(request.device_ids);
  request.device_ids.clear();
  if (request.all) ids.insert(ids.begin(), "all");
  if (none) ids.push_back("none");
  request.all = false;
  for (const auto& id : ids) request.cdi_names.push_back(kind + "=" + id);
}

// The tokens sorted into the request; under [requests] mode = "cdi" the IDs become names of the
// default kind, but NVIDIA's just-in-time names stay the live GPUs they name, as in NVIDIA's
// cdi mode.
Result<bool> classify_request(const std::vector<std::string>& tokens, const std::string& origin,
                              const Config& config, GpuRequest& request) {
  if (config.requests.mode != "cdi") return classify(tokens, origin, request);
  std::vector<std::string> live, named;
  for (const auto& token : tokens)
    (token.starts_with(kJitCdiPrefix) ? live : named).push_back(token);
  if (!named.empty()) {
    auto wanted = classify(named, origin, request);
    if (!wanted || !*wanted) return wanted;
    qualify_ids(request, config.cdi.default_kind);
  }
  return classify(live, origin, request);
}

// [requests] supported-capabilities as a set.
CapabilitySet supported_capabilities(const Config& config) {
  CapabilitySet set;
  for (const auto& name : config.requests.supported_capabilities) {
    if (const auto cap = capability_from_name(name)) set.add(*cap);
  }
  return set;
}

Result<CapabilitySet> read_capabilities(const SpecView& spec, const Config& config) {
  const CapabilitySet allowed = supported_capabilities(config);
  const auto supported = [&](Capability c) { return allowed.has(c); };
  CapabilitySet caps;
  const auto value = env_value(spec, kCapabilitiesVar);
  const auto items = comma_list(value.value_or(""));
  if (items.empty()) {
    for (Capability c : {Capability::kUtility, Capability::kCompute}) {
      if (supported(c)) caps.add(c);
    }
    return caps;
  }
  const bool all = std::find(items.begin(), items.end(), "all") != items.end();
  for (Capability c : kAllCapabilities) {
    if (all && supported(c)) caps.add(c);
  }
  for (const auto& item : items) {
    if (item == "all") continue;
    const auto cap = capability_from_name(item);
    if (!cap)
      return Error{std::string(kCapabilitiesVar) + ": unknown driver capability `" +
                   printable(item, 64) + "`"};
    if (!supported(*cap)) {
      return Error{std::string(kCapabilitiesVar) + ": capability `" + item +
                   "` is not in [requests] supported-capabilities"};
    }
    caps.add(*cap);
  }
  return caps;
}

// The hook's capability flags that [requests] supported-capabilities allows; ctr passes every
// flag it knows, so the others are withheld with a warning rather than failing every run.
CapabilitySet hook_capabilities(const CliHookRequest& hook, const Config& config,
                                const Logger& logger) {
  const CapabilitySet allowed = supported_capabilities(config);
  CapabilitySet caps, withheld;
  for (Capability c : kAllCapabilities) {
    if (hook.capabilities.has(c)) (allowed.has(c) ? caps : withheld).add(c);
  }
  if (!withheld.empty()) {
    logger.warning(std::string(kCliHookOrigin) + ": capabilities " + withheld.to_string() +
                   " withheld: not in [requests] supported-capabilities");
  }
  return caps;
}

bool go_true(const std::string& v) {
  return v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "true" || v == "True";
}

// CUDA_VERSION=12.4.1 without NVIDIA_REQUIRE_CUDA means cuda>=12.4 (legacy CUDA images).
Result<std::optional<Requirement>> legacy_cuda_requirement(const SpecView& spec) {
  const auto cuda = env_value(spec, "CUDA_VERSION");
  const auto required = env_value(spec, "NVIDIA_REQUIRE_CUDA");
  if (!cuda || cuda->empty() || (required && !required->empty()))
    return std::optional<Requirement>();
  // Read as NVIDIA's toolkit reads it, a semantic version with an optional `v` whose minor
  // and patch may be left out: `12` is 12.0, `v12.4.1` 12.4.
  std::string_view version = *cuda;
  if (version.starts_with('v')) version.remove_prefix(1);
  version = version.substr(0, version.find_first_of("-+"));
  const auto parts = split(version, '.');
  if (parts.size() > 3 || !parse_decimal(parts[0]) ||
      (parts.size() > 1 && !parse_decimal(parts[1])) ||
      (parts.size() > 2 && !parse_decimal(parts[2]))) {
    return Error{"CUDA_VERSION `" + printable(*cuda, 64) + "` is not a version"};
  }
  auto r = parse_requirement("CUDA_VERSION", "cuda>=" + std::string(parts[0]) + "." +
                                                 std::string(parts.size() > 1 ? parts[1] : "0"));
  if (!r) return r.error();
  return std::optional<Requirement>(*r);
}

Result<std::vector<Requirement>> read_requirements(const SpecView& spec, const Config& config,
                                                   const CliHookRequest* hook) {
  std::vector<Requirement> out;
  if (config.requests.disable_require ||
      go_true(env_value(spec, "NVIDIA_DISABLE_REQUIRE").value_or("")))
    return out;
  for (const auto& expression : hook != nullptr ? hook->requirements : std::vector<std::string>()) {
    auto r = parse_requirement("nvidia-container-cli --require", expression);
    if (!r) return r.error();
    out.push_back(*r);
  }
  for (const auto& [name, value] : spec.env) {
    if (name.rfind(kRequirePrefix, 0) != 0 || name.rfind(kJetpackPrefix, 0) == 0) continue;
    auto r = parse_requirement(name, value);
    if (!r) return r.error();
    out.push_back(*r);
  }
  auto legacy = legacy_cuda_requirement(spec);
  if (!legacy) return legacy.error();
  if (*legacy) out.push_back(**legacy);
  return out;
}

// `all` in any case, empty items skipped, as NVIDIA's.
Result<bool> mig_flag_value(std::string_view value, const std::string& origin) {
  bool all = false;
  for (auto item : split(value, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    if (!iequals(item, "all"))
      return Error{origin + ": only `all` is supported, not `" + printable(value, 64) + "`"};
    all = true;
  }
  return all;
}

Result<bool> read_mig_flag(const SpecView& spec, const char* variable) {
  const std::string raw = env_value(spec, variable).value_or("");
  const auto value = trim(raw);
  if (value.empty()) return false;
  if (!spec.privileged)
    return Error{std::string(variable) + " needs a privileged container (CAP_SYS_ADMIN)"};
  return mig_flag_value(value, variable);
}

// The hook's --mig-config / --mig-monitor: chosen on ctr's command line, not by the image.
Result<bool> hook_mig_flag(const std::vector<std::string>& values, const char* flag) {
  return mig_flag_value(join(values, ","), std::string("nvidia-container-cli ") + flag);
}

// NVIDIA_IMEX_CHANNELS (or imex/<channel> markers when they are accepted): channel numbers,
// under the same privilege rule as the devices; `none` or `void` means no channel. `all` is
// ignored, as the NVIDIA runtime does: channels separate tenants, so an image cannot ask for
// every one.
Result<std::vector<unsigned>> imex_channels_of(const std::vector<std::string>& tokens,
                                               const std::string& origin, const Logger& logger);

Result<std::vector<unsigned>> read_imex_channels(const SpecView& spec, const Config& config,
                                                 const Logger& logger) {
  std::vector<std::string> tokens;
  std::string origin = std::string(kVolumeMarkerDir) + "/imex";
  if (config.requests.accept_volume_mounts) tokens = volume_marker_channels(spec);
  if (tokens.empty()) {
    origin = kImexChannelsVar;
    tokens = comma_list(env_value(spec, kImexChannelsVar).value_or(""));
    if (!tokens.empty() && !env_request_allowed(spec, config, logger, kImexChannelsVar))
      return std::vector<unsigned>();
  }
  return imex_channels_of(tokens, origin, logger);
}

Result<std::vector<unsigned>> imex_channels_of(const std::vector<std::string>& tokens,
                                               const std::string& origin, const Logger& logger) {
  std::vector<unsigned> channels;
  std::set<unsigned> seen;  // the list is the image's: a search of `channels` would be quadratic
  bool all = false;
  for (const auto& token : tokens) {
    if (token == "none" || token == "void") return std::vector<unsigned>();
    if (token == "all") {
      all = true;
      continue;
    }
    const auto n = parse_decimal(token);
    if (!n || *n > kMaxImexChannel) {
      return Error{origin + ": `" + printable(token, 64) + "` is not an IMEX channel (0-" +
                   std::to_string(kMaxImexChannel) + ")"};
    }
    const auto channel = static_cast<unsigned>(*n);
    if (seen.insert(channel).second) channels.push_back(channel);
  }
  if (all) logger.warning(origin + ": `all` is ignored; name the IMEX channels");
  return channels;
}

// NVIDIA_GDS, ... = enabled, under the same privilege rule as the environment's devices.
std::vector<GatedFeature> read_gated_features(const SpecView& spec, const Config& config,
                                              const Logger& logger) {
  std::vector<GatedFeature> features;
  for (GatedFeature f : kAllGatedFeatures) {
    const char* variable = gated_feature_variable(f);
    if (env_value(spec, variable) == "enabled" &&
        env_request_allowed(spec, config, logger, variable))
      features.push_back(f);
  }
  return features;
}

struct DeviceList {
  GpuRequest::Source source;
  std::vector<std::string> tokens;
  std::string origin;
};

// The environment's device list: Docker Swarm's generic-resource variables ([requests]
// swarm-resource) where the spec sets any of them (even empty), each of them set in order, as
// NVIDIA's runtime reads them; else NVIDIA_VISIBLE_DEVICES. Its origin names the variables.
DeviceList env_device_list(const SpecView& spec, const Config& config) {
  std::vector<std::string> tokens;
  std::vector<std::string> present;
  for (const auto& name : config.requests.swarm_resource) {
    const auto value = env_value(spec, name);
    if (!value) continue;
    present.push_back(name);
    for (auto& token : comma_list(*value)) tokens.push_back(std::move(token));
  }
  if (!present.empty()) return {GpuRequest::Source::kEnv, std::move(tokens), join(present, ",")};
  return {GpuRequest::Source::kEnv, comma_list(env_value(spec, kVisibleDevicesVar).value_or("")),
          kVisibleDevicesVar};
}

Result<std::optional<DeviceList>> device_list(const SpecView& spec, const Config& config,
                                              const CliHookRequest* hook, const Logger& logger) {
  auto annotated = annotation_names(spec, config);
  if (!annotated) return annotated.error();
  if (!annotated->empty())
    return std::optional<DeviceList>({GpuRequest::Source::kAnnotation, *annotated, "annotations"});
  if (config.requests.accept_volume_mounts) {
    auto marked = volume_marker_ids(spec);
    if (!marked.empty())
      return std::optional<DeviceList>(
          {GpuRequest::Source::kVolumeMount, marked, kVolumeMarkerDir});
  }
  if (hook != nullptr) {
    const auto env = env_device_list(spec, config);
    if (!env.tokens.empty()) {
      logger.info(std::string(kCliHookOrigin) + " chooses the GPUs; " + env.origin + "=" +
                  printable(join(env.tokens, ","), 64) +
                  " (usually the image's default) is not used");
    }
    const auto tokens = hook->devices.empty() ? std::vector<std::string>{"none"} : hook->devices;
    return std::optional<DeviceList>({GpuRequest::Source::kCliHook, tokens, kCliHookOrigin});
  }
  auto env = env_device_list(spec, config);
  const auto& tokens = env.tokens;
  if (tokens.empty()) return std::optional<DeviceList>();
  if (!env_request_allowed(spec, config, logger, env.origin)) return std::optional<DeviceList>();
  // The device plugin's volume-mounts strategy: the GPUs are the markers, not this value.
  if (env.origin == kVisibleDevicesVar && tokens.size() == 1 &&
      clean_path(tokens.front()) == kVolumeMarkerDir) {
    if (!config.requests.accept_volume_mounts) {
      return Error{std::string(kVisibleDevicesVar) + "=" + kVolumeMarkerDir +
                   ": the GPUs were handed as volume mounts, which this runtime reads only with "
                   "[requests] accept-volume-mounts = true"};
    }
    logger.warning(std::string(kVisibleDevicesVar) + "=" + kVolumeMarkerDir +
                   " but no device is mounted under it: no GPU given");
    return std::optional<DeviceList>();
  }
  return std::optional<DeviceList>(std::move(env));
}

// What the hook asks beside the devices: capabilities, MIG access, IMEX channels.
Status read_hook_extras(const CliHookRequest& hook, const Config& config, const Logger& logger,
                        GpuRequest& request) {
  request.capabilities = hook_capabilities(hook, config, logger);
  auto mig_config = hook_mig_flag(hook.mig_config, "--mig-config");
  if (!mig_config) return mig_config.error();
  auto mig_monitor = hook_mig_flag(hook.mig_monitor, "--mig-monitor");
  if (!mig_monitor) return mig_monitor.error();
  request.mig_config = *mig_config;
  request.mig_monitor = *mig_monitor;
  auto channels =
      imex_channels_of(hook.imex_channels, "nvidia-container-cli --imex-channel", logger);
  if (!channels) return channels.error();
  request.imex_channels = std::move(*channels);
  return {};
}

// A request of CDI devices only takes what their specs say: the capabilities and MIG access of
// the environment apply to live GPUs, so they are not read (an image's unknown capability or
// its MIG variable in an unprivileged pod does not fail it), as in NVIDIA's CDI modes.
void note_unused_live_variables(const SpecView& spec, const Logger& logger) {
  if (!logger.enabled(LogLevel::kDebug)) return;
  std::vector<std::string> unused;
  for (const char* variable :
       {kCapabilitiesVar, "NVIDIA_MIG_CONFIG_DEVICES", "NVIDIA_MIG_MONITOR_DEVICES"}) {
    if (!comma_list(env_value(spec, variable).value_or("")).empty()) unused.emplace_back(variable);
  }
  if (!unused.empty()) {
    logger.debug(join(unused, ", ") +
                 " not used: only CDI devices are asked for, whose specs say what they give");
  }
}

// The capabilities and MIG access the environment asks for the live GPUs.
Status read_live_env_extras(const SpecView& spec, const Config& config, GpuRequest& request) {
  auto caps = read_capabilities(spec, config);
  if (!caps) return caps.error();
  request.capabilities = *caps;
  auto mig_config = read_mig_flag(spec, "NVIDIA_MIG_CONFIG_DEVICES");
  if (!mig_config) return mig_config.error();
  auto mig_monitor = read_mig_flag(spec, "NVIDIA_MIG_MONITOR_DEVICES");
  if (!mig_monitor) return mig_monitor.error();
  request.mig_config = *mig_config;
  request.mig_monitor = *mig_monitor;
  return {};
}

// What the environment asks beside the devices: capabilities and MIG access for live GPUs,
// IMEX channels (or their volume markers) for any request.
Status read_env_extras(const SpecView& spec, const Config& config, const Logger& logger,
                       GpuRequest& request) {
  if (request.live()) {
    if (auto s = read_live_env_extras(spec, config, request); !s) return s;
  } else {
    note_unused_live_variables(spec, logger);
  }
  auto channels = read_imex_channels(spec, config, logger);
  if (!channels) return channels.error();
  request.imex_channels = std::move(*channels);
  return {};
}

}  // namespace

bool could_be_request_part(std::string_view text, const Config& config) {
  if (text.rfind("NVIDIA_", 0) == 0 || text.find("nvidia-container") != std::string_view::npos)
    return true;
  const auto starts = [&](const std::string& p) { return text.rfind(p, 0) == 0; };
  const auto& prefixes = config.requests.annotation_prefixes;
  const auto& swarm = config.requests.swarm_resource;
  return std::any_of(prefixes.begin(), prefixes.end(), starts) ||
         std::any_of(swarm.begin(), swarm.end(), starts);
}

bool could_be_request_part_of_any_config(std::string_view text) {
  static const Config defaults;
  if (could_be_request_part(text, defaults) || text.rfind(kSwarmVariablePrefix, 0) == 0)
    return true;
  const auto tokens = split(text, ',');
  return std::any_of(tokens.begin(), tokens.end(),
                     [](std::string_view t) { return parse_qualified_name(trim(t)).has_value(); });
}

Result<std::optional<GpuRequest>> read_gpu_request(const SpecView& spec, const Config& config,
                                                   const Logger& logger) {
  auto hook = read_cli_hook(spec);
  if (!hook) return hook.error();
  const CliHookRequest* from_hook = *hook ? &**hook : nullptr;
  auto list = device_list(spec, config, from_hook, logger);
  if (!list) return list.error();
  if (!*list) return std::optional<GpuRequest>();
  GpuRequest request;
  request.source = (*list)->source;
  request.origin = (*list)->origin;
  request.privileged = spec.privileged;
  auto wanted = classify_request((*list)->tokens, (*list)->origin, config, request);
  if (!wanted) return wanted.error();
  if (!*wanted) return std::optional<GpuRequest>();
  const bool by_hook = request.source == GpuRequest::Source::kCliHook;
  auto extras = by_hook ? read_hook_extras(*from_hook, config, logger, request)
                        : read_env_extras(spec, config, logger, request);
  if (!extras) return extras.error();
  auto requirements = read_requirements(spec, config, by_hook ? from_hook : nullptr);
  if (!requirements) return requirements.error();
  request.requirements = std::move(*requirements);
  request.features = read_gated_features(spec, config, logger);
  return std::optional<GpuRequest>(std::move(request));
}

}  // namespace gcr
