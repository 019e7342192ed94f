// A GPU's PCI configuration space (sysfs' `config`, read whole by root) as GPU Feature Discovery
// reads it for NVIDIA vGPU: a vGPU, the virtual GPU NVIDIA's vGPU manager gives a VM, carries a
// vendor-specific capability signed "VF", whose records may name the host's vGPU manager driver.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gcr {

struct VgpuInfo {
  std::string host_driver_version;  // "" when its record is not there
  std::string host_driver_branch;
};

// Whether the configuration space is a vGPU's; nullopt when it is not, or when it is shorter
// than the 256 bytes of a configuration header (read without privilege: it cannot be told).
// The capability list is followed with every step bounded: a loop, a pointer past the end or a
// record of length 0 ends the walk.
[[nodiscard]] std::optional<VgpuInfo> vgpu_of_pci_config(std::string_view config);

}  // namespace gcr
