// The facts the labels are computed from, gathered from the discovery the device plugin uses:
// its GPUs, MIG devices, topology and health as the caller has them, the driver's version from
// /proc, the machine from DMI, and what only NVML knows (asked once per GPU and per driver).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "driver/device_nodes.h"
#include "driver/nvml.h"
#include "labels/labels.h"
#include "topology/topology.h"

namespace gcr {

struct LabelSources {
  const std::vector<Gpu>& gpus;                               // in index order
  const std::map<std::string, std::vector<MigDevice>>& migs;  // by GPU UUID, each in MIG mode
  const Topology& topology;
  const std::set<std::string>& unhealthy;  // GPU UUIDs
  Nvml* nvml;                              // null while NVML is not ready
  bool mig_modes_known = true;             // with a MIG strategy: NVML was there to tell them
};

class NodeFactsReader {
 public:
  explicit NodeFactsReader(Config::Driver roots) : roots_(std::move(roots)) {}

  // What is known now. Without NVML: the driver's facts only, no NVLink topology. The driver
  // version last seen is kept while /proc has none (the driver reloading).
  [[nodiscard]] NodeLabelFacts read(const LabelSources& sources);

 private:
  struct NvmlFacts {
    std::optional<std::string> arch;
    std::optional<unsigned long long> memory_mib;
    std::optional<bool> mig_capable;
  };
  GpuLabelFacts gpu_facts(const Gpu& gpu, const LabelSources& sources);
  std::optional<VgpuInfo> vgpu(const Gpu& gpu);
  std::optional<std::uint32_t> pci_class(const Gpu& gpu);
  void read_driver_version();
  void ask_cuda_version(Nvml* nvml);
  void read_machine();

  Config::Driver roots_;
  std::map<std::string, NvmlFacts> nvml_facts_;       // by GPU UUID, once NVML answered for it
  std::map<std::string, std::uint32_t> pci_classes_;  // by GPU UUID, once sysfs said it
  // By GPU UUID, once its PCI configuration space was read whole: whether it is a vGPU.
  std::map<std::string, std::optional<VgpuInfo>> vgpus_;
  std::optional<std::string> driver_version_;
  std::optional<std::string> cuda_version_;
  std::optional<std::string> cuda_asked_for_;  // the driver version cuda_version_ belongs to
  std::optional<std::optional<std::string>> machine_;  // read once
};

}  // namespace gcr
