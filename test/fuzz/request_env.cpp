// A container's environment (one NAME=value per line) as a GPU request: device lists,
// capabilities, requirements, IMEX channels, MIG and gated features.
#include "config/config.h"
#include "fuzz.h"
#include "log/log.h"
#include "oci/spec_view.h"
#include "request/request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gcr::SpecView view;
  for (const auto& line : gcr::fuzz::parts_of(gcr::fuzz::text_of(data, size), '\n')) {
    const auto eq = line.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    view.env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  view.privileged = size % 2 == 0;
  const gcr::Logger logger("fuzz");
  gcr::Config config;
  config.requests.mode = size % 3 == 0 ? "cdi" : "auto";
  (void)gcr::read_gpu_request(view, config, logger);
  return 0;
}
