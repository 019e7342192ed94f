// Parsers for the files the NVIDIA kernel driver publishes under /proc.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gcr {

// A PCI address; ordering is PCI bus order (domain, bus, device, function).
struct PciAddress {
  std::uint32_t domain = 0;
  std::uint32_t bus = 0;
  std::uint32_t device = 0;
  std::uint32_t function = 0;
  auto operator<=>(const PciAddress&) const = default;
  // "0000:3b:00.0" (domain printed with at least 4 digits, as /proc does).
  [[nodiscard]] std::string to_string() const;
};

// Parses "%x:%x:%x.%x" or "%x:%x.%x" (domain 0), hex digits only, case-insensitive.
[[nodiscard]] std::optional<PciAddress> parse_pci_address(std::string_view text);

// proc/driver/nvidia/version: the version after "Kernel Module" on the first line.
[[nodiscard]] Result<std::string> parse_driver_version(std::string_view text);

// proc/driver/nvidia/gpus/<bus>/information
struct GpuInformation {
  std::string model;
  std::string uuid;
  PciAddress bus;
  unsigned minor = 0;
};
[[nodiscard]] Result<GpuInformation> parse_gpu_information(std::string_view text);

// proc/devices, "Character devices:" section: name -> major.
[[nodiscard]] std::map<std::string, unsigned> parse_char_majors(std::string_view text);

// proc/driver/nvidia-caps/mig-minors: "config 1", "monitor 2", "gpu0/gi1/access 12",
// "gpu0/gi1/ci0/access 13". Any other line is an error (a malformed file is refused).
struct MigMinors {
  std::optional<unsigned> config;
  std::optional<unsigned> monitor;
  std::map<std::string, unsigned> by_path;  // "gpu0/gi1/access" -> 12
};
[[nodiscard]] Result<MigMinors> parse_mig_minors(std::string_view text);

// A capability file (proc/driver/nvidia/capabilities/.../access): "DeviceFileMinor: N".
[[nodiscard]] Result<unsigned> parse_cap_file_minor(std::string_view text);

}  // namespace gcr
