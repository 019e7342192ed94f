// A bundle's config.json as the shim reads it: the strict reader, then the view of the fields
// it decides on, then the request those fields make.
#include "oci/spec_view.h"
#include "config/config.h"
#include "fuzz.h"
#include "json/strict_json.h"
#include "log/log.h"
#include "request/request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto doc = gcr::parse_json_strict(gcr::fuzz::text_of(data, size));
  if (!doc) return 0;
  auto view = gcr::view_spec(*doc);
  if (!view) return 0;
  const gcr::Logger logger("fuzz");
  gcr::Config config;
  (void)gcr::read_gpu_request(*view, config, logger);
  config.requests.accept_volume_mounts = true;
  config.requests.accept_env_when_unprivileged = false;
  (void)gcr::read_gpu_request(*view, config, logger);
  return 0;
}
