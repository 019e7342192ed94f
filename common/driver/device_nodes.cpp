#include "driver/device_nodes.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "base/text.h"
#include "driver/files.h"
#include "driver/root_path.h"
#include "hooks/driver_params.h"
#include "vocabulary/imex_channel.h"

namespace gcr {
namespace {

constexpr unsigned kNvidiaMajor = 195;
constexpr unsigned kCtlMinor = 255;
constexpr unsigned kModesetMinor = 254;
constexpr unsigned kDrmMajor = 226;
constexpr std::size_t kMaxProcFileBytes = 1 << 20;

}  // namespace

DeviceNodes::DeviceNodes(std::string dev_root, NodeStatFn stat, HostFs& fs, Notes& notes)
    : dev_root_(std::move(dev_root)), stat_(std::move(stat)), fs_(fs), notes_(notes) {}

std::string DeviceNodes::dev_path(const std::string& in_root) const {
  return join_root(dev_root_, in_root);
}

Result<std::string> DeviceNodes::read_proc(const std::string& in_root,
                                           const std::vector<std::string>& anchors_in_root) {
  const std::string path = dev_path(in_root);
  const auto read_live = [&] { return fs_.read_file(path, kMaxProcFileBytes); };
  if (!proc_files_) return read_live();
  std::vector<std::string> anchors;
  for (const auto& anchor : anchors_in_root) anchors.push_back(dev_path(anchor));
  return proc_files_->read(path, anchors, read_live);
}

Result<std::string> DeviceNodes::version() {
  if (!version_) {
    const std::string path = dev_path("/proc/driver/nvidia/version");
    auto text = read_proc("/proc/driver/nvidia/version");
    if (!text && is_wsl()) {
      version_ = Error{"NVIDIA driver not found: this is WSL2 (" + dev_path("/dev/dxg") +
                       "), where the driver has no /proc files and gpu-container-runtime cannot "
                       "give containers its GPUs (" +
                       path + ")"};
    } else if (!text) {
      version_ = Error{"NVIDIA driver not found: " + text.error().message + " (" + path + ")"};
    } else if (auto v = parse_driver_version(*text); !v) {
      version_ = Error{"cannot read the driver version: " + v.error().message + " (" + path + ")"};
    } else {
      version_ = *v;
    }
  }
  return *version_;
}

bool DeviceNodes::is_wsl() {
  struct stat st {};
  return fs_.lstat(dev_path("/dev/dxg"), st);
}

bool DeviceNodes::modifies_device_files() {
  auto text = read_proc(kDriverParamsPath);
  return text && without_device_node_modification(*text).has_value();
}

Result<Gpu> DeviceNodes::read_gpu(const std::string& entry) {
  const std::string in_root = "/proc/driver/nvidia/gpus/" + entry + "/information";
  const std::string path = dev_path(in_root);
  auto text = read_proc(in_root);
  if (!text)
    return Error{"cannot read GPU information: " + text.error().message + " (" + path + ")"};
  auto info = parse_gpu_information(*text);
  if (!info)
    return Error{"cannot read GPU information: " + info.error().message + " (" + path + ")"};
  return Gpu{0, info->model, info->uuid, info->bus, info->minor};
}

Result<std::vector<Gpu>> DeviceNodes::gpus() {
  if (gpus_) return *gpus_;
  std::vector<Gpu> found;
  for (const auto& entry : fs_.list(dev_path("/proc/driver/nvidia/gpus"))) {
    auto gpu = read_gpu(entry);
    if (!gpu) {
      gpus_ = gpu.error();
      return *gpus_;
    }
    // An entry named otherwise than its file's bus: the names give no order.
    if (parse_pci_address(entry) != gpu->bus) gpu_entries_.emplace(std::nullopt);
    found.push_back(std::move(*gpu));
  }
  std::sort(found.begin(), found.end(), [](const Gpu& a, const Gpu& b) { return a.bus < b.bus; });
  for (unsigned i = 0; i < found.size(); ++i) found[i].index = i;
  gpus_ = found;
  return *gpus_;
}

Result<std::vector<PciAddress>> DeviceNodes::gpu_buses() {
  if (!gpu_entries_ && !gpus_) {
    std::vector<GpuEntry> entries;
    bool by_bus = true;
    for (const auto& name : fs_.list(dev_path("/proc/driver/nvidia/gpus"))) {
      const auto bus = parse_pci_address(name);
      by_bus = by_bus && bus;
      if (bus) entries.push_back(GpuEntry{*bus, name});
    }
    std::sort(entries.begin(), entries.end(),
              [](const GpuEntry& a, const GpuEntry& b) { return a.bus < b.bus; });
    by_bus = by_bus && std::adjacent_find(entries.begin(), entries.end(),
                                          [](const GpuEntry& a, const GpuEntry& b) {
                                            return a.bus == b.bus;
                                          }) == entries.end();
    gpu_entries_.emplace(by_bus ? std::optional(std::move(entries)) : std::nullopt);
  }
  std::vector<PciAddress> buses;
  if (gpu_entries_ && *gpu_entries_) {
    for (const auto& entry : **gpu_entries_) buses.push_back(entry.bus);
    return buses;
  }
  auto all = gpus();
  if (!all) return all.error();
  for (const auto& gpu : *all) buses.push_back(gpu.bus);
  return buses;
}

bool DeviceNodes::gpu_order_from_names() const {
  return gpu_entries_ && *gpu_entries_;
}

Result<Gpu> DeviceNodes::gpu(unsigned index) {
  auto buses = gpu_buses();
  if (!buses) return buses.error();
  if (index >= buses->size()) return Error{"no GPU " + std::to_string(index)};
  if (const auto it = read_gpus_.find(index); it != read_gpus_.end()) return it->second;
  if (!gpus_ && gpu_entries_ && *gpu_entries_) {
    const GpuEntry& entry = (**gpu_entries_)[index];
    auto one = read_gpu(entry.name);
    if (!one) return one.error();
    if (one->bus == entry.bus) {
      one->index = index;
      return read_gpus_.emplace(index, std::move(*one)).first->second;
    }
    // Named otherwise: the whole table decides, and what was read by name is forgotten.
    gpu_entries_.emplace(std::nullopt);
    read_gpus_.clear();
  }
  auto all = gpus();
  if (!all) return all.error();
  if (index >= all->size()) return Error{"no GPU " + std::to_string(index)};
  return (*all)[index];
}

Result<std::map<std::string, unsigned>> DeviceNodes::char_majors() {
  if (!majors_) {
    const std::string path = dev_path("/proc/devices");
    // The majors asked for are those of the nvidia and nvidia-uvm modules.
    auto text = read_proc("/proc/devices", {"/sys/module/nvidia", "/sys/module/nvidia_uvm"});
    majors_ = text ? Result<std::map<std::string, unsigned>>(parse_char_majors(*text))
                   : Result<std::map<std::string, unsigned>>(
                         Error{text.error().message + " (" + path + ")"});
  }
  return *majors_;
}

Result<DeviceNode> DeviceNodes::checked_node(const std::string& name, unsigned expected_major) {
  return checked_node(name, expected_major, stat_(dev_path("/dev/" + name)));
}

Result<DeviceNode> DeviceNodes::checked_node(const std::string& name, unsigned expected_major,
                                             const Result<NodeStat>& st) {
  const std::string container_path = "/dev/" + name;
  const std::string host_path = dev_path(container_path);
  if (!st) return Error{"missing device node: " + st.error().message};
  if (st->type != 'c') return Error{"not a character device (" + host_path + ")"};
  if (st->major != expected_major) {
    return Error{"device node has major " + std::to_string(st->major) + ", expected " +
                 std::to_string(expected_major) + " (" + host_path + ")"};
  }
  return node_from(container_path, *st);
}

DeviceNode DeviceNodes::node_from(const std::string& container_path, const NodeStat& st) const {
  DeviceNode node;
  node.path = container_path;
  node.host_path = dev_path(container_path);
  node.type = "c";
  node.major = st.major;
  node.minor = st.minor;
  node.file_mode = st.permissions & 0777;
  if (st.gid != 0) node.gid = st.gid;
  return node;
}

std::vector<DeviceNode> DeviceNodes::char_nodes(const std::string& dir,
                                                const std::string& pattern) {
  auto names = fs_.list(dev_path(dir));
  std::vector<DeviceNode> nodes;
  for (const auto& name : names) {
    if (::fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
    const std::string container_path = dir + "/" + name;
    auto st = stat_(dev_path(container_path));
    if (st && st->type == 'c') nodes.push_back(node_from(container_path, *st));
  }
  return nodes;
}

Result<DeviceNode> DeviceNodes::gpu_node(const Gpu& gpu) {
  auto node = checked_node("nvidia" + std::to_string(gpu.minor), kNvidiaMajor);
  if (node && *node->minor != gpu.minor) {
    return Error{"device node minor " + std::to_string(*node->minor) +
                 " does not match GPU minor " + std::to_string(gpu.minor) + " (" + node->host_path +
                 ")"};
  }
  return node;
}

Result<std::vector<DeviceNode>> DeviceNodes::drm_nodes(const Gpu& gpu) {
  auto names = fs_.list(dev_path("/sys/bus/pci/devices/" + gpu.bus.to_string() + "/drm"));
  std::vector<DeviceNode> nodes;
  for (const auto& name : names) {
    if (name.rfind("card", 0) != 0 && name.rfind("renderD", 0) != 0) continue;
    if (!stat_(dev_path("/dev/dri/" + name))) continue;
    auto node = checked_node("dri/" + name, kDrmMajor);
    if (!node) return node.error();
    nodes.push_back(std::move(*node));
  }
  return nodes;
}

Result<std::vector<DeviceNode>> DeviceNodes::control_nodes(const CapabilitySet& caps) {
  std::vector<DeviceNode> nodes;
  auto ctl = checked_node("nvidiactl", kNvidiaMajor);
  if (!ctl) return ctl.error();
  if (*ctl->minor != kCtlMinor)
    return Error{"nvidiactl has minor " + std::to_string(*ctl->minor) + ", expected 255"};
  nodes.push_back(*ctl);
  if (const auto st = caps.has(Capability::kDisplay) ? stat_(dev_path("/dev/nvidia-modeset"))
                                                     : Result<NodeStat>(Error{"not asked"});
      st) {
    auto modeset = checked_node("nvidia-modeset", kNvidiaMajor, st);
    if (!modeset) return modeset.error();
    if (*modeset->minor != kModesetMinor)
      return Error{"nvidia-modeset has minor " + std::to_string(*modeset->minor) +
                   ", expected 254"};
    nodes.push_back(*modeset);
  }
  if (!needs_compute_libraries(caps)) return nodes;
  auto majors = char_majors();
  const auto uvm =
      majors ? majors->find("nvidia-uvm") : std::map<std::string, unsigned>::const_iterator();
  if (!majors || uvm == majors->end()) {
    notes_.add(
        stat_(dev_path("/dev/nvidia-uvm"))
            ? "/dev/nvidia-uvm not given: nvidia-uvm is not listed in " +
                  dev_path("/proc/devices") + "; CUDA fails in the container"
            : "no " + dev_path("/dev/nvidia-uvm") +
                  " (the nvidia-uvm module is not loaded): CUDA fails in the container until it "
                  "is (nvidia-modprobe -u -c=0)");
    return nodes;
  }
  for (const char* name : {"nvidia-uvm", "nvidia-uvm-tools"}) {
    const auto st = stat_(dev_path(std::string("/dev/") + name));
    if (!st) continue;
    auto node = checked_node(name, uvm->second, st);
    if (!node) return node.error();
    nodes.push_back(*node);
  }
  return nodes;
}

Result<DeviceNode> DeviceNodes::node_of_module(const std::string& name, const std::string& module) {
  auto majors = char_majors();
  if (!majors) return majors.error();
  const auto major = majors->find(module);
  if (major == majors->end())
    return Error{"the " + module + " device is not listed in " + dev_path("/proc/devices")};
  return checked_node(name, major->second);
}

Result<DeviceNode> DeviceNodes::cap_node(unsigned minor) {
  return node_of_module("nvidia-caps/nvidia-cap" + std::to_string(minor), "nvidia-caps");
}

Result<DeviceNode> DeviceNodes::imex_channel_node(unsigned channel) {
  const std::string module(kImexChannelModule);
  auto node = node_of_module(module + "/" + imex_channel_node_name(channel), module);
  if (node && *node->minor != channel) {
    return Error{"device node minor " + std::to_string(*node->minor) + " is not channel " +
                 std::to_string(channel) + " (" + node->host_path + ")"};
  }
  return node;
}

Result<DeviceNode> DeviceNodes::imex_channel_device(unsigned channel) {
  const std::string dir(kImexChannelDir);
  const std::string name = imex_channel_node_name(channel);
  const std::string path = dev_path(dir + "/" + name);
  auto found = char_nodes(dir, name);
  if (found.empty()) return Error{"no character device (" + path + ")"};
  if (found.front().minor != static_cast<std::int64_t>(channel)) {
    return Error{"device node minor " + std::to_string(found.front().minor.value_or(0)) +
                 " is not channel " + std::to_string(channel) + " (" + path + ")"};
  }
  return std::move(found.front());
}

Result<MigMinors> DeviceNodes::mig_minors() {
  const std::string path = dev_path("/proc/driver/nvidia-caps/mig-minors");
  auto text = fs_.read_file(path, kMaxProcFileBytes);
  if (!text)
    return Error{"cannot read MIG capability minors: " + text.error().message + " (" + path + ")"};
  auto minors = parse_mig_minors(*text);
  if (!minors)
    return Error{"cannot read MIG capability minors: " + minors.error().message + " (" + path +
                 ")"};
  return minors;
}

std::vector<MigInstance> DeviceNodes::mig_instances(const Gpu& gpu) {
  std::vector<MigInstance> out;
  const std::string dir =
      dev_path("/proc/driver/nvidia/capabilities/gpu" + std::to_string(gpu.minor) + "/mig");
  for (const auto& gi : fs_.list(dir)) {
    const auto gi_id =
        gi.rfind("gi", 0) == 0 ? parse_decimal(std::string_view(gi).substr(2)) : std::nullopt;
    if (!gi_id) continue;
    for (const auto& ci : fs_.list(dir + "/" + gi)) {
      const auto ci_id =
          ci.rfind("ci", 0) == 0 ? parse_decimal(std::string_view(ci).substr(2)) : std::nullopt;
      if (ci_id)
        out.push_back(MigInstance{static_cast<unsigned>(*gi_id), static_cast<unsigned>(*ci_id)});
    }
  }
  return out;
}

Result<std::vector<DeviceNode>> DeviceNodes::mig_access_nodes(const Gpu& gpu,
                                                              const MigInstance& instance) {
  const std::string gi =
      dev_path("/proc/driver/nvidia/capabilities/gpu" + std::to_string(gpu.minor) + "/mig/gi" +
               std::to_string(instance.gpu_instance));
  std::vector<DeviceNode> nodes;
  for (const std::string& file :
       {gi + "/access", gi + "/ci" + std::to_string(instance.compute_instance) + "/access"}) {
    auto text = fs_.read_file(file, kMaxProcFileBytes);
    if (!text)
      return Error{"cannot read a MIG capability: " + text.error().message + " (" + file + ")"};
    auto minor = parse_cap_file_minor(*text);
    if (!minor)
      return Error{"cannot read a MIG capability: " + minor.error().message + " (" + file + ")"};
    auto node = cap_node(*minor);
    if (!node) return node.error();
    nodes.push_back(std::move(*node));
  }
  return nodes;
}

}  // namespace gcr
