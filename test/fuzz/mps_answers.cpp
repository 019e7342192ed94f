// What NVIDIA's MPS control client prints back: a thread percentage ("25.0") and a pinned-memory
// limit ("2G", "10240M"). A percentage read is within 0-100; a limit written as "<n>M" reads
// back as n.
#include "fuzz.h"
#include "mps/mps_daemon.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(gcr::fuzz::text_of(data, size));
  if (const auto pct = gcr::parse_mps_percentage(text))
    gcr::fuzz::require(*pct >= 0.0 && *pct <= 100.0);
  if (const auto mib = gcr::parse_mps_memory_mib(text)) {
    const auto back = gcr::parse_mps_memory_mib(std::to_string(*mib) + "M");
    gcr::fuzz::require(back == mib);
  }
  return 0;
}
