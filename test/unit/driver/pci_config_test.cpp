// GPU Feature Discovery's vGPU test on a GPU's PCI configuration space: the vendor-specific
// capability signed "VF" and its host driver record, with every walk bounded.
#include <doctest/doctest.h>

#include <string>

#include "driver/pci_config.h"

namespace {

// A 256-byte configuration header: an NVIDIA 3D controller with a capability list of a power
// management capability at 0x60, then `vendor` (the vendor-specific capability's bytes from its
// id on) at 0xc8.
std::string header_with(const std::string& vendor) {
  std::string config(256, '\0');
  config[0x00] = '\xde';  // vendor 0x10de
  config[0x01] = '\x10';
  config[0x06] = '\x10';  // status: a capability list
  config[0x0b] = '\x03';  // class 0x03: display controller
  config[0x34] = '\x60';
  config[0x60] = '\x01';  // power management, next at 0xc8
  config[0x61] = vendor.empty() ? '\0' : '\xc8';
  config.replace(0xc8, vendor.size(), vendor);
  return config;
}

// A vGPU's capability: id 0x09, next 0, its length, "VF", then one record 0 of 22 bytes
// holding the host driver's version and branch, 10 bytes each.
std::string vgpu_capability(const std::string& version, const std::string& branch) {
  std::string cap = "\x09";
  cap += '\0';
  cap += static_cast<char>(5 + 2 + 20);
  cap += "VF";
  cap += '\0';  // record 0
  cap += static_cast<char>(22);
  cap += version + std::string(10 - version.size(), '\0');
  cap += branch + std::string(10 - branch.size(), '\0');
  return cap;
}

}  // namespace

TEST_CASE("a vGPU: the VF-signed capability and its host driver's version and branch") {
  const auto info = gcr::vgpu_of_pci_config(header_with(vgpu_capability("580.95.05", "r580_00")));
  REQUIRE(info.has_value());
  CHECK(info->host_driver_version == "580.95.05");
  CHECK(info->host_driver_branch == "r580_00");
  // PCI Express' extended space after the header changes nothing.
  const auto extended =
      header_with(vgpu_capability("580.95.05", "r580_00")) + std::string(3840, 'x');
  CHECK(gcr::vgpu_of_pci_config(extended)->host_driver_branch == "r580_00");
}

TEST_CASE("not a vGPU: a passed-through GPU, no capability list, a header read unprivileged") {
  std::string other = vgpu_capability("580.95.05", "r580_00");
  other[3] = 'N';
  CHECK_FALSE(gcr::vgpu_of_pci_config(header_with(other)).has_value());
  CHECK_FALSE(gcr::vgpu_of_pci_config(header_with("")).has_value());
  std::string no_list = header_with(vgpu_capability("580.95.05", "r580_00"));
  no_list[0x06] = '\0';
  CHECK_FALSE(gcr::vgpu_of_pci_config(no_list).has_value());
  // sysfs gives an unprivileged reader the first 64 bytes: it cannot be told.
  CHECK_FALSE(
      gcr::vgpu_of_pci_config(header_with(vgpu_capability("1", "r1")).substr(0, 64)).has_value());
}

TEST_CASE("hostile configuration spaces: loops, pointers past the end, empty records") {
  // A capability list that loops back on itself.
  std::string loop = header_with("");
  loop[0x61] = '\x60';
  CHECK_FALSE(gcr::vgpu_of_pci_config(loop).has_value());
  // A vendor capability at the header's last bytes, its length past the end.
  std::string tail = header_with("");
  tail[0x61] = '\xfd';
  tail.replace(0xfd, 3, std::string("\x09\x00\x40", 3));
  CHECK_FALSE(gcr::vgpu_of_pci_config(tail).has_value());
  // A record of length 0 ends the walk: a vGPU without a driver record.
  std::string cap = vgpu_capability("580.95.05", "r580_00");
  cap[5] = '\x07';
  cap[6] = '\0';
  const auto empty = gcr::vgpu_of_pci_config(header_with(cap));
  REQUIRE(empty.has_value());
  CHECK(empty->host_driver_version.empty());
  // Record 0 shorter than its two fields: they are not read from what follows it.
  std::string short_record = vgpu_capability("580.95.05", "r580_00");
  short_record[6] = '\x0c';
  const auto partial = gcr::vgpu_of_pci_config(header_with(short_record));
  REQUIRE(partial.has_value());
  CHECK(partial->host_driver_branch.empty());
  // NULs before a field's text are trimmed as those after it are.
  const auto padded =
      gcr::vgpu_of_pci_config(header_with(vgpu_capability("580.95.05", std::string("\0r580", 5))));
  REQUIRE(padded.has_value());
  CHECK(padded->host_driver_branch == "r580");
  // A record chain whose length leads past the capability: no driver record either.
  cap[6] = '\x7f';
  const auto past = gcr::vgpu_of_pci_config(header_with(cap));
  REQUIRE(past.has_value());
  CHECK(past->host_driver_branch.empty());
}
