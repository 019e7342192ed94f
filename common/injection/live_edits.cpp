#include "injection/live_edits.h"

#include <algorithm>
#include <map>
#include <set>
#include <span>
#include <string_view>

#include "base/text.h"
#include "discovery_cache/driver_files_cache.h"
#include "driver/files.h"
#include "edits/injected_hooks.h"

namespace gcr {
namespace {

constexpr std::string_view kReadOnlyBind[] = {"ro", "nosuid", "nodev", "rbind", "rprivate"};
constexpr std::string_view kIpcBind[] = {"nosuid", "nodev", "rbind", "rprivate", "noexec"};

std::string replace_version(std::string text, const std::string& version) {
  const std::string marker = "@VERSION@";
  const auto at = text.find(marker);
  if (at != std::string::npos) text.replace(at, marker.size(), version);
  return text;
}

void add_bind(ContainerEdits& edits, const HostFile& file,
              std::span<const std::string_view> options) {
  edits.mounts.push_back(Mount{file.host_path, file.path, "bind",
                               std::vector<std::string>(options.begin(), options.end())});
}

Status add_cap(ContainerEdits& edits, DriverHost& host, const std::optional<unsigned>& minor,
               const char* what) {
  if (!minor) return Error{std::string("the driver lists no MIG ") + what + " capability"};
  auto node = host.devices().cap_node(*minor);
  if (!node) return node.error();
  add_device_node(edits, std::move(*node));
  return {};
}

// NVIDIA_MIG_CONFIG_DEVICES / NVIDIA_MIG_MONITOR_DEVICES=all: the global config / monitor
// capability plus every MIG capability of the selected GPUs that has a node. Not with MIG
// devices chosen one by one, as NVIDIA's: their GPU's every MIG capability would come too.
Status add_mig_management(ContainerEdits& edits, const GpuRequest& request,
                          const Selection& selection, DriverHost& host) {
  if (!request.mig_config && !request.mig_monitor) return {};
  if (!selection.migs.empty()) {
    return Error{std::string(request.mig_config ? "the MIG config capability"
                                                : "the MIG monitor capability") +
                 " cannot be combined with individually selected MIG devices (" +
                 selection.migs.front().mig.uuid + "): it opens every MIG device of their GPU"};
  }
  const std::vector<Gpu>& selected = selection.gpus;
  auto minors = host.devices().mig_minors();
  if (!minors) return minors.error();
  if (request.mig_config) {
    if (auto s = add_cap(edits, host, minors->config, "config"); !s) return s;
  }
  if (request.mig_monitor) {
    if (auto s = add_cap(edits, host, minors->monitor, "monitor"); !s) return s;
  }
  for (const auto& gpu : selected) {
    const std::string prefix = "gpu" + std::to_string(gpu.minor) + "/";
    for (const auto& [path, minor] : minors->by_path) {
      if (path.rfind(prefix, 0) != 0) continue;
      if (auto node = host.devices().cap_node(minor)) add_device_node(edits, std::move(*node));
    }
  }
  return {};
}

// The access capabilities of the selected MIG devices (with `all`: of every MIG instance on
// the selected GPUs), each node once.
Status add_mig_devices(ContainerEdits& edits, const GpuRequest& request, const Selection& selected,
                       DriverHost& host) {
  std::vector<std::pair<Gpu, MigInstance>> wanted;
  for (const auto& m : selected.migs)
    wanted.emplace_back(m.gpu, MigInstance{m.mig.gpu_instance, m.mig.compute_instance});
  if (request.all) {
    for (const auto& gpu : selected.gpus) {
      for (const auto& instance : host.devices().mig_instances(gpu))
        wanted.emplace_back(gpu, instance);
    }
  }
  std::set<std::string> added;
  for (const auto& [gpu, instance] : wanted) {
    auto nodes = host.devices().mig_access_nodes(gpu, instance);
    if (!nodes)
      return nodes.error().wrap("GPU " + std::to_string(gpu.index) + " MIG instance " +
                                std::to_string(instance.gpu_instance) + "/" +
                                std::to_string(instance.compute_instance));
    for (auto& node : *nodes) {
      if (added.insert(node.path).second) add_device_node(edits, std::move(node));
    }
  }
  return {};
}

// "<target>::<link>" for a link rule of `lib`: beside it, or in the directory the driver
// root's loader finds it in, pointing at where it is mounted.
std::string link_spec(const LibraryLink& rule, const DriverLibrary& lib,
                      const std::string& version) {
  const std::string dir = dirname_of(lib.path);
  const std::string target = replace_version(rule.target, version);
  if (!rule.loader_dir || lib.loader_dir.empty() || lib.loader_dir == dir)
    return target + "::" + dir + "/" + rule.link;
  return dir + "/" + target + "::" + lib.loader_dir + "/" + rule.link;
}

// `to` as a link's target from the directory of `link` (both absolute, clean): relative, as the
// driver's own links are.
std::string relative_target(const std::string& to, const std::string& link) {
  const std::string dir = dirname_of(link);
  const auto from = split(dir, '/');
  const auto parts = split(to, '/');
  std::size_t common = 0;
  while (common < from.size() && common + 1 < parts.size() && from[common] == parts[common])
    ++common;
  std::string target;
  for (std::size_t i = common; i < from.size(); ++i) {
    if (!from[i].empty()) target += "../";
  }
  for (std::size_t i = common; i < parts.size(); ++i) {
    if (parts[i].empty()) continue;
    target += std::string(parts[i]) + (i + 1 < parts.size() ? "/" : "");
  }
  return target;
}

// The driver's files, each host file mounted once: at the name that is the file itself in the
// driver root (else the first name found), its other names (the driver root's link
// gbm/nvidia-drm_gbm.so -> ../libnvidia-allocator.so.1) links to it, as on the host, made with
// the libraries' links.
class DriverFiles {
 public:
  explicit DriverFiles(ContainerEdits& edits) : edits_(edits) {}

  void add(const HostFile& file, std::span<const std::string_view> options = kReadOnlyBind) {
    files_.push_back({file, options});
    const auto [at, fresh] = mount_at_.try_emplace(file.host_path, file.path);
    // The name that is the file itself wins over a link's name found before it.
    if (!fresh && file.host_path.ends_with(file.path) && !file.host_path.ends_with(at->second))
      at->second = file.path;
  }
  void add_folder(const std::string& dir) {
    if (seen_.insert(dir).second) folders_.push_back(dir);
  }
  void add_link(std::string spec) { links_.push_back(std::move(spec)); }
  void add_library_facts(const std::string& host_path, const ElfLibrary& elf) {
    host_libraries_.emplace(host_path, elf);
  }
  // The mounts, the other names' links, and the request that the links and the loader cache
  // be made (by the shim at create when it can, else by the hook), when there is any of either.
  std::optional<LibrariesRequest> finish(const Config& config) {
    std::set<std::string> mounted;
    for (const auto& [file, options] : files_) {
      const std::string& at = mount_at_[file.host_path];
      if (at == file.path) {
        if (mounted.insert(file.path).second) add_bind(edits_, file, options);
      } else {
        links_.push_back(relative_target(at, file.path) + "::" + file.path);
      }
    }
    if (folders_.empty() && links_.empty()) return std::nullopt;
    return LibrariesRequest{folders_, links_, config.hooks.ldconfig, host_libraries_};
  }

 private:
  ContainerEdits& edits_;
  std::vector<std::pair<HostFile, std::span<const std::string_view>>> files_;
  std::map<std::string, std::string> mount_at_;  // host file -> the name it is mounted at
  std::vector<std::string> folders_;
  std::set<std::string> seen_;
  std::vector<std::string> links_;
  std::map<std::string, ElfLibrary> host_libraries_;
};

// Library mounts plus the folders and links the hooks need.
Status add_libraries(DriverFiles& files, const std::vector<DriverLibrary>& libs,
                     const CapabilitySet& caps, DriverHost& host) {
  auto version = host.devices().version();
  if (!version) return version.error();
  const bool has_libcuda = std::any_of(
      libs.begin(), libs.end(), [](const DriverLibrary& l) { return l.prefix == "libcuda.so"; });
  if (needs_compute_libraries(caps) && !has_libcuda)
    host.notes().add("no usable libcuda.so." + *version + " in the driver root (" +
                     host.files().driver_path("/") + "): CUDA fails in the container");
  for (const auto& lib : libs) {
    files.add(lib);
    files.add_folder(dirname_of(lib.path));
    if (lib.elf) files.add_library_facts(lib.host_path, *lib.elf);
    for (const auto& rule : library_links()) {
      if (rule.prefix == lib.prefix) files.add_link(link_spec(rule, lib, *version));
    }
  }
  return {};
}

}  // namespace

void add_device_node(ContainerEdits& edits, DeviceNode node) {
  // A node not usable by everyone is usable through its group: give the container that group.
  if (node.gid && (node.file_mode.value_or(0) & 06) != 06)
    edits.additional_gids.push_back(*node.gid);
  edits.device_nodes.push_back(std::move(node));
}

void add_read_only_bind(ContainerEdits& edits, const HostFile& file) {
  add_bind(edits, file, kReadOnlyBind);
}

ContainerEdits with_libraries_hook(GatheredEdits gathered, const Config::Hooks& hooks) {
  if (!gathered.libraries) return std::move(gathered.edits);
  auto& list = gathered.edits.hooks;
  list.insert(list.begin(),
              update_libraries_hook(hooks, gathered.libraries->folders, gathered.libraries->links));
  return std::move(gathered.edits);
}

Result<GatheredEdits> driver_edits(const CapabilitySet& caps, DriverHost& host,
                                   const Config& config) {
  ContainerEdits edits;
  auto control = host.devices().control_nodes(caps);
  if (!control) return control.error();
  for (auto& node : *control) add_device_node(edits, std::move(node));
  auto found = cached_file_set(caps, host, config.runtime.state_dir);
  if (!found) return found.error();
  DriverFiles files(edits);
  if (auto s = add_libraries(files, found->libraries, caps, host); !s) return s.error();
  for (const auto& bin : found->binaries) files.add(bin);
  for (const auto& ipc : host.files().ipc_endpoints(caps)) files.add(ipc, kIpcBind);
  for (const auto& fw : found->firmware) files.add(fw);
  for (const auto& config_file : found->config_files) files.add(config_file);
  for (const auto& module : found->modules) files.add(module);
  auto libraries = files.finish(config);
  // The libraries must not make device nodes: NVIDIA 1.18's disable-device-node-modification.
  if (host.devices().modifies_device_files())
    edits.hooks.push_back(disable_device_node_modification_hook(config.hooks));
  // The driver's EGL must see only the container's GPUs: NVIDIA 1.20's update-application-profile.
  if (needs_graphics_libraries(caps))
    edits.hooks.push_back(update_application_profile_hook(config.hooks));
  return GatheredEdits{std::move(edits), std::move(libraries)};
}

Result<ContainerEdits> gpu_edits(const Gpu& gpu, DriverHost& host, bool drm) {
  auto node = host.devices().gpu_node(gpu);
  if (!node) return node.error().wrap("GPU " + std::to_string(gpu.index));
  ContainerEdits edits;
  add_device_node(edits, std::move(*node));
  if (!drm) return edits;
  auto drm_nodes = host.devices().drm_nodes(gpu);
  if (!drm_nodes) return drm_nodes.error().wrap("GPU " + std::to_string(gpu.index));
  for (auto& drm_node : *drm_nodes) add_device_node(edits, std::move(drm_node));
  return edits;
}

Result<ContainerEdits> imex_edits(const std::vector<unsigned>& channels, DriverHost& host) {
  ContainerEdits edits;
  for (unsigned channel : channels) {
    auto node = host.devices().imex_channel_node(channel);
    if (!node) return node.error().wrap("IMEX channel " + std::to_string(channel));
    add_device_node(edits, std::move(*node));
  }
  return edits;
}

Result<ContainerEdits> device_edits(const GpuRequest& request, const Selection& selected,
                                    DriverHost& host) {
  ContainerEdits edits;
  for (const auto& gpu : selected.gpus) {
    // A GPU present only as a MIG device's parent keeps its display devices to itself.
    const bool drm =
        needs_graphics_libraries(request.capabilities) && selected.whole.count(gpu.index) != 0;
    auto one = gpu_edits(gpu, host, drm);
    if (!one) return one;
    edits.append(*one);
  }
  if (auto s = add_mig_devices(edits, request, selected, host); !s) return s.error();
  if (auto s = add_mig_management(edits, request, selected, host); !s) return s.error();
  return edits;
}

Result<GatheredEdits> live_edits(const GpuRequest& request, const Selection& selected,
                                 DriverHost& host, const Config& config) {
  auto gathered = driver_edits(request.capabilities, host, config);
  if (!gathered) return gathered;
  auto devices = device_edits(request, selected, host);
  if (!devices) return devices.error();
  gathered->edits.append(*devices);
  return gathered;
}

}  // namespace gcr
