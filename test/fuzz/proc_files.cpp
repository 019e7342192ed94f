// The files the driver publishes under /proc (a dev root may be a directory others wrote).
#include "driver/pci_config.h"
#include "driver/proc.h"
#include "fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = gcr::fuzz::text_of(data, size);
  (void)gcr::parse_driver_version(text);
  (void)gcr::parse_gpu_information(text);
  (void)gcr::parse_char_majors(text);
  (void)gcr::parse_mig_minors(text);
  (void)gcr::parse_cap_file_minor(text);
  (void)gcr::vgpu_of_pci_config(text);
  return 0;
}
