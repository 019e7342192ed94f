#include "doctor/cdi_checks.h"

#include <sys/stat.h>

#include <algorithm>
#include <set>

#include "base/node_stat.h"
#include "base/text.h"
#include "cdi/registry.h"
#include "driver/host.h"
#include "vocabulary/cdi_name.h"
#include "vocabulary/imex_channel.h"

namespace gcr {
namespace {

constexpr const char* kArea = "cdi";

// The host files a spec's edits name: device nodes, bind mounts and hooks.
void host_paths_of(const ContainerEdits& edits, std::set<std::string>& out) {
  for (const auto& node : edits.device_nodes)
    out.insert(node.host_path.empty() ? node.path : node.host_path);
  for (const auto& mount : edits.mounts) {
    if (mount.type.empty() || mount.type == "bind") out.insert(mount.host_path);
  }
  for (const auto& hook : edits.hooks) out.insert(hook.path);
}

// Why a spec no longer fits the host: a file it names is gone, or a library of another version.
std::optional<std::string> staleness(const CdiSpec& spec,
                                     const std::optional<std::string>& driver_version) {
  std::set<std::string> paths;
  host_paths_of(spec.edits, paths);
  for (const auto& device : spec.devices) host_paths_of(device.edits, paths);
  for (const auto& path : paths) {
    const auto version = library_version_of(path);
    if (version && driver_version && *version != *driver_version)
      return "made for driver " + *version + ", " + *driver_version + " is loaded (" + path + ")";
  }
  for (const auto& path : paths) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return "it names " + path + ", which does not exist";
  }
  return std::nullopt;
}

bool needs_cdi(const Config& config) {
  return config.requests.mode == "cdi" || config.device_plugin.hands_out_cdi_names();
}

// Whether `spec` is an IMEX channels' spec (what --mode imex writes, of whatever class): its
// devices give IMEX channel nodes and nothing else.
bool is_imex_spec(const CdiSpec& spec) {
  const std::string dir = std::string(kImexChannelDir) + "/";
  const auto channel_nodes_only = [&](const ContainerEdits& edits) {
    return edits.mounts.empty() && edits.hooks.empty() && edits.env.empty() &&
           std::all_of(edits.device_nodes.begin(), edits.device_nodes.end(),
                       [&](const DeviceNode& node) { return node.path.starts_with(dir); });
  };
  return !spec.devices.empty() && spec.edits.device_nodes.empty() &&
         channel_nodes_only(spec.edits) &&
         std::all_of(spec.devices.begin(), spec.devices.end(), [&](const CdiDevice& device) {
           return !device.edits.device_nodes.empty() && channel_nodes_only(device.edits);
         });
}

// The command that writes `spec` again for the loaded driver at `path`: the management spec and
// the IMEX channels' in their modes, another kind with its vendor and class.
std::string regenerate_command(const CdiSpec& spec, const std::string& path) {
  const auto slash = spec.kind.find('/');
  const std::string vendor = spec.kind.substr(0, slash);
  const std::string device_class = slash == std::string::npos ? "" : spec.kind.substr(slash + 1);
  const bool imex = is_imex_spec(spec);
  std::string command = "gpu-ctk cdi generate";
  if (vendor == kManagementVendor) {
    command += " --mode management";
  } else if (imex) {
    command += " --mode imex";
  }
  if (vendor != "nvidia.com" && vendor != kManagementVendor) command += " --vendor " + vendor;
  if (!device_class.empty() && device_class != (imex ? kImexChannelClass : "gpu"))
    command += " --class " + device_class;
  return command + " --output " + path;
}

// The fix of a stale `spec` at `path`: written again, or, for IMEX channels where the node has
// none now (--mode imex would fail), removed.
std::string stale_spec_fix(const CdiSpec& spec, const std::string& path, const Config& config) {
  if (is_imex_spec(spec)) {
    DriverHost host(config.driver, lstat_node);
    if (host.devices().char_nodes(kImexChannelDir, "channel*").empty())
      return "rm " + path + " (this node has no IMEX channel now; gpu-ctk cdi generate --mode " +
             "imex writes it again once it has)";
  }
  return regenerate_command(spec, path);
}

// With device-list cdi-annotations or cdi-cri, the names the device plugin hands out for the
// GPUs the driver lists (<default-kind>=<uuid|index>) must be devices of a spec, or every pod
// given one fails to start ("unresolvable CDI devices"). Whole GPUs only: under a MIG strategy
// the MIG devices' names need NVML.
void check_plugin_names(const Config& config, const CdiRegistry& registry, Findings& findings) {
  if (!config.device_plugin.hands_out_cdi_names() || config.device_plugin.mig_strategy != "none")
    return;
  DriverHost host(config.driver, lstat_node);
  auto gpus = host.devices().gpus();
  if (!gpus || gpus->empty()) return;  // the driver's checks say why
  std::vector<std::string> missing;
  for (const auto& gpu : *gpus) {
    const bool by_index = config.device_plugin.device_ids == "index";
    if (!by_index && !gpu.uuid_known()) continue;  // not handed out yet: the driver's check says
    const std::string name =
        config.cdi.default_kind + "=" + (by_index ? std::to_string(gpu.index) : gpu.uuid);
    if (registry.devices.count(name) == 0) missing.push_back(name);
  }
  const std::string evidence = "[device-plugin] device-ids = " + config.device_plugin.device_ids +
                               "; " + join(config.cdi.spec_dirs, ", ");
  if (missing.empty()) {
    findings.ok(kArea,
                "every GPU the device plugin hands out is a device of a spec (" +
                    std::to_string(gpus->size()) + ")",
                evidence);
    return;
  }
  // The spec of that kind written again where it is (generate names both uuid and index).
  std::string fix = "gpu-ctk cdi generate --output /etc/cdi/nvidia.yaml";
  for (const auto& file : registry.specs) {
    if (file.spec.kind == config.cdi.default_kind) fix = regenerate_command(file.spec, file.path);
  }
  findings.fail(kArea,
                "no spec defines " + join(missing, ", ") +
                    ", which the device plugin hands out: pods given it fail to start "
                    "(unresolvable CDI devices)",
                evidence, fix + ", after every change of GPUs");
}

// With imex-channel and device-list cdi-annotations or cdi-cri, the plugin hands out
// <vendor>/imex-channel=0 beside the GPUs while the node has the channel: a spec must define it,
// or every pod given GPUs fails to start.
void check_plugin_imex_name(const Config& config, const CdiRegistry& registry, Findings& findings) {
  if (!config.device_plugin.hands_out_cdi_names() ||
      config.device_plugin.imex_channel == "disabled")
    return;
  DriverHost host(config.driver, lstat_node);
  if (!host.devices().imex_channel_device(0)) return;  // none handed out: kubernetes says so
  const std::string& kind = config.cdi.default_kind;
  const std::string name = imex_channel_cdi_name(kind.substr(0, kind.find('/')), 0);
  const std::string evidence =
      "[device-plugin] imex-channel = " + config.device_plugin.imex_channel + "; " +
      join(config.cdi.spec_dirs, ", ");
  if (registry.devices.count(name) != 0) {
    findings.ok(kArea, "the IMEX channel the device plugin hands out is a device of a spec",
                evidence);
    return;
  }
  // gpu-cdi-refresh writes nvidia.com's names: another vendor's spec is written by hand.
  const std::string vendor = kind.substr(0, kind.find('/'));
  const std::string command =
      "gpu-ctk cdi generate --mode imex" +
      (vendor == "nvidia.com" ? std::string() : " --vendor " + vendor) +
      " --output /var/run/cdi/nvidia-imex.yaml" +
      (vendor == "nvidia.com"
           ? " (or systemctl enable --now gpu-cdi-refresh.path gpu-cdi-refresh.service)"
           : " (gpu-cdi-refresh writes nvidia.com's: run it again when the channels change)");
  findings.fail(kArea,
                "no spec defines " + name +
                    ", which the device plugin hands out with the GPUs: pods given GPUs fail to "
                    "start (unresolvable CDI devices)",
                evidence, command);
}

}  // namespace

std::optional<std::string> library_version_of(const std::string& path) {
  const std::string name = basename_of(path);
  const auto so = name.find(".so.");
  if (so == std::string::npos) return std::nullopt;
  const std::string tail = name.substr(so + 4);
  if (std::count(tail.begin(), tail.end(), '.') < 1 || tail.front() == '.' || tail.back() == '.' ||
      tail.find_first_not_of("0123456789.") != std::string::npos)
    return std::nullopt;
  // "libfoo.so.1.2" style sonames are not driver versions: the driver's have a 3-digit major.
  if (tail.find('.') < 3) return std::nullopt;
  return tail;
}

void check_cdi(const Config& config, const CdiRegistry& registry,
               const std::optional<std::string>& driver_version, Findings& findings) {
  // What the runtime refuses, as it refuses it ("<path>: why").
  for (const auto& error : registry.errors) {
    findings.fail(kArea, "a spec is refused: " + error, "",
                  "fix or remove it (gpu-ctk cdi validate shows every problem); gpu-ctk cdi "
                  "generate --output FILE writes a new one");
  }
  for (const auto& file : registry.specs) {
    if (const auto stale = staleness(file.spec, driver_version)) {
      findings.fail(kArea, "stale spec: " + *stale, file.path,
                    stale_spec_fix(file.spec, file.path, config));
      continue;
    }
    findings.ok(kArea,
                file.spec.kind + ": " + std::to_string(file.spec.devices.size()) + " devices" +
                    (driver_version ? ", for driver " + *driver_version : ""),
                file.path);
  }
  if (!registry.specs.empty() || !registry.errors.empty()) {
    // A refused spec may be the one that names them: its FAIL says what to do first.
    if (registry.errors.empty()) {
      check_plugin_names(config, registry, findings);
      check_plugin_imex_name(config, registry, findings);
    }
    return;
  }
  const std::string dirs = join(config.cdi.spec_dirs, ", ");
  if (needs_cdi(config)) {
    findings.fail(kArea, "no CDI spec, and the configuration asks for CDI names", dirs,
                  "gpu-ctk cdi generate --output /etc/cdi/nvidia.yaml");
  } else {
    findings.ok(kArea, "no CDI specs (requests use the live driver)", dirs);
  }
}

}  // namespace gcr
