// NVIDIA_REQUIRE_* expressions, parsed and checked against fixed host facts.
#include "request/requirement.h"
#include "fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto requirement =
      gcr::parse_requirement("NVIDIA_REQUIRE_CUDA", std::string(gcr::fuzz::text_of(data, size)));
  if (!requirement) return 0;
  (void)gcr::unmet_alternative(*requirement,
                               gcr::RequirementFacts{"12.4", "550.54.15", "8.0", "Tesla"});
  (void)gcr::unmet_alternative(*requirement, gcr::RequirementFacts{});
  return 0;
}
