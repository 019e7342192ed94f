// A bundle's config.json as the shim reads it: the strict reader, then the view of the fields
// it decides on, then the request those fields make. A spec that `create` skips (no string in
// it could be part of a request) asks for nothing, under either configuration.
#include "oci/spec_view.h"
#include "config/config.h"
#include "fuzz.h"
#include "json/strict_json.h"
#include "log/log.h"
#include "request/request.h"

namespace {

bool asks_nothing(const gcr::Result<std::optional<gcr::GpuRequest>>& request) {
  return request.ok() && !request->has_value();
}

bool skipped(std::string_view text, const gcr::Config& config) {
  auto may_ask = gcr::json_has_string(
      text, [&](std::string_view s) { return gcr::could_be_request_part(s, config); });
  return may_ask.ok() && !*may_ask;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = gcr::fuzz::text_of(data, size);
  auto doc = gcr::parse_json_strict(text);
  if (!doc) return 0;
  auto view = gcr::view_spec(*doc);
  if (!view) return 0;
  const gcr::Logger logger("fuzz");
  gcr::Config config;
  const auto by_default = gcr::read_gpu_request(*view, config, logger);
  gcr::fuzz::require(!skipped(text, config) || asks_nothing(by_default));
  config.requests.accept_volume_mounts = true;
  config.requests.accept_env_when_unprivileged = false;
  const auto strict = gcr::read_gpu_request(*view, config, logger);
  gcr::fuzz::require(!skipped(text, config) || asks_nothing(strict));
  return 0;
}
