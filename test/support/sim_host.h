// A simulated GPU host in a directory: a driver root (stub libraries with real SONAMEs and
// version suffixes, binaries, a persistenced socket, GSP firmware) and a separate dev root
// (real character device nodes, /proc/driver/nvidia files, /proc/devices). GPU index order
// (PCI bus order) differs from the minors, and minor 2 is missing. IMEX channels 0 and 1
// exist; the node named channel3 has minor 4. GDS, MOFED, GDRCOPY and NVSWITCH nodes exist.
// Every GPU but the last in bus order has DRM nodes (card<minor+1>, root:video 0660, and
// renderD<128+minor>). The first half of the GPUs sit on NUMA node 0, the rest on node 1.
#pragma once

#include <string>
#include <vector>

#include "json/strict_json.h"

namespace gcr::test {

struct SimGpu {
  unsigned index;
  std::string bus;  // "0000:06:00.0"
  unsigned minor;
  std::string uuid;
  std::string model;
  int numa;  // sysfs numa_node: the first half of the GPUs on node 0, the rest on node 1
};

enum class LibLayout {
  kMultiarch,   // usr/lib/x86_64-linux-gnu + usr/lib/i386-linux-gnu, no ld.so.cache
  kLib64Cache,  // usr/lib64 + usr/lib (32-bit) with the root's etc/ld.so.cache
  // usr/local/nvidia/lib64 + lib (32-bit), named by etc/ld.so.conf.d and in the root's cache;
  // usr/bin/nvidia-smi a wrapper script running usr/local/nvidia/bin/nvidia-smi, a program
  // (the layout of hosts whose driver is mounted at /usr/local/nvidia, as on the GPU machines
  // the device checks run on)
  kUsrLocalNvidia,
};

struct SimHostOptions {
  unsigned gpus = 4;
  // Per GPU index, overriding the defaults: its NUMA node, and the PCIe switch it sits behind
  // (GPUs with the same number share one; -1: straight under a root port of its NUMA node's
  // host bridge). sysfs holds the matching device paths (/sys/devices/pci.../<bus>).
  std::vector<int> numa;
  std::vector<int> pcie_switch;
  LibLayout layout = LibLayout::kMultiarch;
  bool device_nodes = true;  // real char nodes need root
  // The version /proc/driver/nvidia/version reports; empty: the stub libraries' version (a
  // real driver's files in another driver root need their own).
  std::string driver_version;
};

class SimHost {
 public:
  SimHost(const std::string& dir, const SimHostOptions& options = {});

  [[nodiscard]] const std::string& driver_root() const { return driver_root_; }
  [[nodiscard]] const std::string& dev_root() const { return dev_root_; }
  [[nodiscard]] const std::vector<SimGpu>& gpus() const { return gpus_; }
  [[nodiscard]] static std::string version() { return GCR_STUB_DRIVER_VERSION; }
  // The pid under dev-root's /proc of the fabric manager the simulated NVSwitch host runs.
  static constexpr const char* kFabricManagerPid = "2817";
  // In-root (and in-container) directories of the 64-bit and 32-bit libraries.
  [[nodiscard]] std::string lib_dir() const;
  [[nodiscard]] std::string lib32_dir() const;
  [[nodiscard]] unsigned uvm_major() const { return 508; }
  [[nodiscard]] unsigned caps_major() const { return 509; }
  [[nodiscard]] unsigned imex_major() const { return 510; }

  // {"driver": {"root": ..., "dev-root": ...}} to merge into a configuration.
  [[nodiscard]] Json driver_config() const;
  // The driver lists no MIG instance any more (their /proc/driver/nvidia/capabilities files
  // go), as on a host without MIG; the NVML stub still answers as before.
  void remove_mig_instances() const;
  // GPU `index`'s information file as the driver writes it before it initialises the GPU (no
  // UUID: `GPU-????????-...`, no video BIOS), or as after (`initialised`).
  void set_initialised(std::size_t index, bool initialised) const;

 private:
  void write_proc_files() const;
  void write_sysfs() const;
  void make_device_nodes() const;
  void install_libraries() const;
  void install_binaries_ipc_firmware() const;

  SimHostOptions options_;
  std::string driver_root_;
  std::string dev_root_;
  std::vector<SimGpu> gpus_;
};

// The simulated driver's version, the in-root folder of its 64-bit libraries
// (SimLayout::kMultiarch) and the build tree's folder of the stub libraries (lib64/, lib32/).
inline const std::string kVersion = GCR_STUB_DRIVER_VERSION;
inline const std::string kLib = "/usr/lib/x86_64-linux-gnu/";
inline const std::string kStubs = GCR_STUB_DIR;

}  // namespace gcr::test
