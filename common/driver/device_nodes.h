// The driver as [driver] dev-root shows it: its version, its GPUs, and the device nodes a
// container is given, each checked against the host node. Each question is answered on demand
// and remembered, so a request only pays for what it needs.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/node_stat.h"
#include "base/result.h"
#include "driver/host_fs.h"
#include "driver/notes.h"
#include "driver/proc.h"
#include "vocabulary/capabilities.h"
#include "vocabulary/device_node.h"

namespace gcr {

struct Gpu {
  unsigned index = 0;  // position in PCI bus order, as NVML numbers GPUs
  std::string model;
  std::string uuid;
  PciAddress bus;
  unsigned minor = 0;

  // The driver writes `GPU-????????-????-????-????-????????????` for a GPU it has not
  // initialised yet (no client since it loaded, no nvidia-persistenced): no UUID to match.
  [[nodiscard]] bool uuid_known() const { return uuid.find('?') == std::string::npos; }
};

// A MIG instance (GPU instance, compute instance) that exists on a GPU.
struct MigInstance {
  unsigned gpu_instance = 0;
  unsigned compute_instance = 0;
  bool operator==(const MigInstance&) const = default;
};

// What the driver's /proc files said, kept between calls (discovery_cache/proc_files.h).
class ProcFileStore {
 public:
  virtual ~ProcFileStore() = default;
  // The text of the file at `path`: the one kept while the file and each of `anchors` (the
  // directories of the modules it describes) are still the ones it was read with, else what
  // `read_live` reads (kept when it may be).
  [[nodiscard]] virtual Result<std::string> read(
      const std::string& path, const std::vector<std::string>& anchors,
      const std::function<Result<std::string>()>& read_live) = 0;
};

class DeviceNodes {
 public:
  // `dev_root`'s files read through `fs`, its nodes through `stat`; what a container may miss
  // is added to `notes`.
  DeviceNodes(std::string dev_root, NodeStatFn stat, HostFs& fs, Notes& notes);

  // The driver's /proc files are read through `store` from now on (it must outlive this).
  void keep_proc_files_in(ProcFileStore& store) { proc_files_ = &store; }

  // The driver's version; without the driver, an error that says so (and, on WSL2, why).
  [[nodiscard]] Result<std::string> version();
  // Whether this is WSL2: Microsoft's GPU node dev-root /dev/dxg, where NVIDIA's driver lives in
  // the Windows host and Linux has no nvidia module or /proc/driver/nvidia.
  [[nodiscard]] bool is_wsl();
  // Every GPU, each one's proc/driver/nvidia/gpus/<bus>/information read.
  [[nodiscard]] Result<std::vector<Gpu>> gpus();
  // The GPUs' bus ids in index order, from the names of proc/driver/nvidia/gpus' entries alone.
  [[nodiscard]] Result<std::vector<PciAddress>> gpu_buses();
  // GPU `index` (in bus order, below gpu_buses().size()), its information file read alone;
  // every GPU's when an entry's name is no bus id or not the bus its file gives.
  [[nodiscard]] Result<Gpu> gpu(unsigned index);
  // Whether gpu_buses() and gpu() answer from the entries' names: the driver names each entry
  // by its GPU's bus. False before they are listed, and once a name is found wrong.
  [[nodiscard]] bool gpu_order_from_names() const;
  // Whether the driver's parameters (dev-root proc/driver/nvidia/params) let its libraries
  // create and change device nodes (ModifyDeviceFiles: 1); false when they cannot be read.
  [[nodiscard]] bool modifies_device_files();

  // /dev/nvidia<minor> of a GPU, checked against the host node (char device, major 195).
  [[nodiscard]] Result<DeviceNode> gpu_node(const Gpu& gpu);
  // /dev/dri/card* and /dev/dri/renderD* of a GPU, as sysfs lists them (dev-root
  // sys/bus/pci/devices/<bus>/drm), checked against the host (char device, major 226). None
  // when the GPU has no DRM device (nvidia-drm not loaded); listed nodes absent from /dev skipped.
  [[nodiscard]] Result<std::vector<DeviceNode>> drm_nodes(const Gpu& gpu);
  // nvidiactl always; nvidia-uvm and nvidia-uvm-tools with compute libraries; nvidia-modeset
  // with display. Optional nodes that are absent are skipped.
  [[nodiscard]] Result<std::vector<DeviceNode>> control_nodes(const CapabilitySet& caps);
  // /dev/nvidia-caps/nvidia-cap<minor>, checked against the nvidia-caps major.
  [[nodiscard]] Result<DeviceNode> cap_node(unsigned minor);
  // /dev/nvidia-caps-imex-channels/channel<N>: its major the one /proc/devices lists for
  // nvidia-caps-imex-channels, its minor N.
  [[nodiscard]] Result<DeviceNode> imex_channel_node(unsigned channel);
  // The same channel's character device by its name and minor alone, for readers that see the
  // host's /dev but not its /proc/devices (the device plugin's DaemonSet).
  [[nodiscard]] Result<DeviceNode> imex_channel_device(unsigned channel);
  // proc/driver/nvidia-caps/mig-minors: which cap minor stands for what.
  [[nodiscard]] Result<MigMinors> mig_minors();
  // The MIG instances proc/driver/nvidia/capabilities/gpu<minor>/mig lists for a GPU.
  [[nodiscard]] std::vector<MigInstance> mig_instances(const Gpu& gpu);
  // The access-capability nodes of one instance (GPU instance, then compute instance).
  [[nodiscard]] Result<std::vector<DeviceNode>> mig_access_nodes(const Gpu& gpu,
                                                                 const MigInstance& instance);

  // The character device nodes in dev-root's `dir` whose names match the fnmatch(3)
  // `pattern`, sorted by name; entries of other types (symlinks too) are left out.
  [[nodiscard]] std::vector<DeviceNode> char_nodes(const std::string& dir,
                                                   const std::string& pattern);

  // Where dev-root's files are, for messages and for tools that read them directly.
  [[nodiscard]] std::string dev_path(const std::string& in_root) const;

 private:
  Result<std::map<std::string, unsigned>> char_majors();
  // Dev-root's file `in_root` (through the store, if any), kept while the directories
  // `anchors_in_root` of dev-root are the same.
  Result<std::string> read_proc(const std::string& in_root,
                                const std::vector<std::string>& anchors_in_root = {});
  Result<DeviceNode> checked_node(const std::string& name, unsigned expected_major);
  // The same with the node's lstat `st` already taken.
  Result<DeviceNode> checked_node(const std::string& name, unsigned expected_major,
                                  const Result<NodeStat>& st);
  DeviceNode node_from(const std::string& container_path, const NodeStat& st) const;
  // checked_node with the major /proc/devices lists for `module`.
  Result<DeviceNode> node_of_module(const std::string& name, const std::string& module);
  // The GPU described by the information file in entry `entry` of proc/driver/nvidia/gpus.
  Result<Gpu> read_gpu(const std::string& entry);

  struct GpuEntry {
    PciAddress bus;
    std::string name;
  };

  std::string dev_root_;
  NodeStatFn stat_;
  HostFs& fs_;
  Notes& notes_;
  std::optional<Result<std::string>> version_;
  std::optional<Result<std::vector<Gpu>>> gpus_;
  // The entries in bus order; nothing when one is named otherwise (then gpus() answers).
  std::optional<std::optional<std::vector<GpuEntry>>> gpu_entries_;
  std::map<unsigned, Gpu> read_gpus_;
  ProcFileStore* proc_files_ = nullptr;
  std::optional<Result<std::map<std::string, unsigned>>> majors_;
};

}  // namespace gcr
