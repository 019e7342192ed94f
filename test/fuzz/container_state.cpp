// The OCI state a runtime writes to a hook's stdin.
#include "oci/container_state.h"
#include "fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)gcr::parse_container_state(std::string(gcr::fuzz::text_of(data, size)));
  return 0;
}
