// runc's argv (NUL-separated arguments): the walk never fails, and the argv handed to runc is
// the input unchanged unless it holds our own --gpu-config.
#include "oci/runc_args.h"
#include <algorithm>

#include "fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto args = gcr::fuzz::parts_of(gcr::fuzz::text_of(data, size), '\0');
  const auto parsed = gcr::parse_runc_args(args);
  const auto handed = gcr::args_for_runc(args);
  gcr::fuzz::require(handed.size() <= args.size());
  const bool ours = std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a.find("gpu-config") != std::string::npos;
  });
  if (!ours) gcr::fuzz::require(handed == args && !parsed.config_path);
  return 0;
}
