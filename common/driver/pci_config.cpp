#include "driver/pci_config.h"

#include <array>

namespace gcr {
namespace {

constexpr std::size_t kHeaderBytes = 256;
constexpr std::size_t kStatus = 0x06;
constexpr unsigned kStatusCapabilityList = 0x10;
constexpr std::size_t kCapabilityPointer = 0x34;
constexpr unsigned kVendorSpecific = 0x09;
// The vGPU capability: id, next, length, 'V', 'F', then records of id, length and data; record 0
// holds the host driver's version and branch, 10 bytes each.
constexpr std::size_t kFirstRecord = 5;
constexpr std::size_t kVersionBytes = 10;

unsigned byte_at(std::string_view bytes, std::size_t at) {
  return at < bytes.size() ? static_cast<unsigned char>(bytes[at]) : 0;
}

// The vendor-specific capability, bounded by the header; empty when there is none.
std::string_view vendor_capability(std::string_view header) {
  if ((byte_at(header, kStatus) & kStatusCapabilityList) == 0) return {};
  std::array<bool, kHeaderBytes> visited{};
  for (std::size_t at = byte_at(header, kCapabilityPointer); at != 0 && at + 2 < header.size();
       at = byte_at(header, at + 1)) {
    if (visited[at]) break;
    visited[at] = true;
    const unsigned id = byte_at(header, at);
    if (id == 0xff) break;
    if (id == kVendorSpecific) return header.substr(at, byte_at(header, at + 2));
  }
  return {};
}

// The text of a NUL-padded field, NULs trimmed at both ends.
std::string field(std::string_view bytes) {
  const auto first = bytes.find_first_not_of('\0');
  if (first == std::string_view::npos) return {};
  return std::string(bytes.substr(first, bytes.find_last_not_of('\0') - first + 1));
}

}  // namespace

std::optional<VgpuInfo> vgpu_of_pci_config(std::string_view config) {
  if (config.size() < kHeaderBytes) return std::nullopt;
  const std::string_view capability = vendor_capability(config.substr(0, kHeaderBytes));
  if (capability.size() < kFirstRecord || capability[3] != 'V' || capability[4] != 'F')
    return std::nullopt;
  VgpuInfo info;
  std::size_t at = kFirstRecord;
  while (at + 1 < capability.size() && byte_at(capability, at) != 0) {
    const unsigned length = byte_at(capability, at + 1);
    if (length == 0) return info;
    at += length;
  }
  if (at + 2 + 2 * kVersionBytes <= capability.size() && byte_at(capability, at) == 0 &&
      byte_at(capability, at + 1) >= 2 + 2 * kVersionBytes) {
    info.host_driver_version = field(capability.substr(at + 2, kVersionBytes));
    info.host_driver_branch = field(capability.substr(at + 2 + kVersionBytes, kVersionBytes));
  }
  return info;
}

}  // namespace gcr
