// The node's labels: GPU Feature Discovery's names and meanings, plus NVLink-set labels,
// computed from what discovery found about the driver and the GPUs; Kubernetes' label syntax;
// the text of Node Feature Discovery's local feature file (`key=value` lines, sorted).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "driver/pci_config.h"
#include "driver/probe.h"
#include "topology/topology.h"

namespace gcr {

using Labels = std::map<std::string, std::string>;  // name -> value, sorted by name

// One GPU as the labels see it: the driver's facts, and NVML's once NVML answers.
struct GpuLabelFacts {
  unsigned index = 0;  // as the plugin numbers it (replicas-by-gpu)
  std::string uuid;
  std::string model;                             // the driver's name, "NVIDIA A100-SXM4-40GB"
  std::optional<std::string> arch;               // compute capability, "8.0"
  std::optional<unsigned long long> memory_mib;  // total memory
  std::optional<bool> mig_capable;
  std::optional<std::uint32_t> pci_class;  // sysfs' class: 0x030200 a 3D controller, 0x030000 VGA
  std::vector<MigDevice> migs;             // its MIG devices (read only with a MIG strategy)
  bool mig_mode = false;                   // in MIG mode (known only with a MIG strategy)
  bool healthy = true;
  // "<cluster UUID>.<clique ID>" of its multi-node NVLink fabric (GB200 NVL72), once NVML says it
  // is attached; none while it is not (or still registering).
  std::optional<std::string> fabric_clique;
  bool fabric_known = true;  // false: NVML did not answer for the GPU's fabric (or is not ready)
  std::optional<VgpuInfo> vgpu;  // a vGPU, as its PCI configuration space says (root reads it)
};

struct NodeLabelFacts {
  std::optional<std::string> driver_version;  // the kernel module's, "550.54.15"
  std::optional<std::string> cuda_version;    // the newest CUDA the driver supports, "12.4"
  std::optional<std::string> machine;         // the DMI product name
  std::vector<GpuLabelFacts> gpus;            // in index order
  std::optional<Topology> topology;           // NVML's (with NVLinks); none without NVML
  bool mig_modes_known = true;  // false: the GPUs' MIG modes not known (NVML not ready)
};

// Every label the facts support; a fact not known (NVML not ready) leaves its labels out.
// nvidia.com/vgpu.present=true when a GPU is a vGPU (absent otherwise, as GFD has it), with the
// host's vGPU manager driver version and branch where its capability names them.
// nvidia.com/gpu.clique, as GFD writes it, only when every GPU attached to a fabric is in one
// clique and NVML answered for every GPU: GPUs in several are said in `left_out`.
// Single-valued GPU labels (product, memory, family, compute capability) describe GPU 0.
// Every value is what the driver says made a label value (label_value); a fact with nothing
// left is left out, but for the product, which is kUnknownProduct then ("unknown",
// "unknown-SHARED", "unknown-MIG-1g.5gb"), its "-MIG-<profile>" and "-SHARED" kept whole within
// 63 characters. Last, every name and value is checked against Kubernetes' syntax
// (drop_invalid_labels): a label that fails is left out, never written, and said in `left_out`.
[[nodiscard]] Labels node_labels(const NodeLabelFacts& facts, const Config::DevicePlugin& plugin,
                                 std::vector<std::string>* left_out = nullptr);

// nvidia.com/gpu.product of a GPU whose name has no letter or digit.
inline constexpr const char* kUnknownProduct = "unknown";

// How GPUs are shared: "time-slicing" with replicas > 1, else "none".
[[nodiscard]] std::string sharing_strategy(const Config::DevicePlugin& plugin);

// Kubernetes' syntax: a qualified name (an optional DNS-subdomain prefix of at most 253
// characters and '/', then at most 63 of [-_.A-Za-z0-9] with alphanumerics at both ends), and
// a value (empty, or like the name part).
[[nodiscard]] bool is_label_name(std::string_view name);
[[nodiscard]] bool is_label_value(std::string_view value);

// `raw` as a label value, as GFD's sanitise makes one: characters outside [A-Za-z0-9-_. ]
// dropped (tabs and newlines too) and each run of spaces one '-'; then the ends are trimmed to
// alphanumerics and the whole cut to 63 characters ("" when nothing is left).
[[nodiscard]] std::string label_value(std::string_view raw);

// Leaves out every label whose name or value Kubernetes would refuse; one line for the log
// each ("label left out, not valid in Kubernetes: `name=value`").
[[nodiscard]] std::vector<std::string> drop_invalid_labels(Labels& labels);

// GFD's architecture family of a compute capability ("ampere" for 8.0), "undefined" if unknown.
[[nodiscard]] std::string gpu_family(unsigned major, unsigned minor);

// NFD's local feature-file format: one `name=value` line per label, sorted by name.
[[nodiscard]] std::string labels_text(const Labels& labels);

}  // namespace gcr
