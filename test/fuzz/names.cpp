// CDI qualified names and PCI addresses: what parses prints back the same.
#include "driver/proc.h"
#include "fuzz.h"
#include "vocabulary/cdi_name.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = gcr::fuzz::text_of(data, size);
  if (const auto name = gcr::parse_qualified_name(text)) {
    gcr::fuzz::require(name->to_string() == text);
    gcr::fuzz::require(gcr::is_valid_kind(name->kind()));
  }
  if (const auto address = gcr::parse_pci_address(text)) {
    gcr::fuzz::require(gcr::parse_pci_address(address->to_string()) == address);
  }
  return 0;
}
