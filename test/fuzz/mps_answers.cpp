// What NVIDIA's MPS control client prints back: a thread percentage ("25.0") and a pinned-memory
// limit ("2G", "10240M"). A percentage read is within 0-100; a limit written as "<n>M" reads
// back as n, and an answer taken as a limit of n MiB says no more than n, less than a TiB under.
#include "fuzz.h"
#include "mps/mps_daemon.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(gcr::fuzz::text_of(data, size));
  if (const auto pct = gcr::parse_mps_percentage(text))
    gcr::fuzz::require(*pct >= 0.0 && *pct <= 100.0);
  if (const auto mib = gcr::parse_mps_memory_mib(text)) {
    const auto back = gcr::parse_mps_memory_mib(std::to_string(*mib) + "M");
    gcr::fuzz::require(back == mib);
    gcr::fuzz::require(gcr::mps_memory_reads_as(std::to_string(*mib) + "M", *mib));
  }
  // Whatever it answers, a limit is one the daemon may hold: never more than it printed allows.
  if (gcr::mps_memory_reads_as(text, 20389)) {
    const auto shown = gcr::parse_mps_memory_mib(text);
    gcr::fuzz::require(shown && *shown <= 20389 && 20389 - *shown < 1024 * 1024);
  }
  return 0;
}
