// A bundle's config.json as the shim reads it: the strict reader, then the view of the fields
// it decides on, then the request those fields make. A spec that `create` skips (no string in
// it could be part of a request) asks for nothing, under either configuration. EGL's
// application profile, read from the same spec, has a GPU for a device node at most.
#include "oci/spec_view.h"

#include <bit>

#include "config/config.h"
#include "fuzz.h"
#include "hooks/app_profile.h"
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

std::size_t device_count(const gcr::Json& spec) {
  const gcr::Json::json_pointer at("/linux/devices");
  if (!spec.is_object() || !spec.contains(at) || !spec.at(at).is_array()) return 0;
  return spec.at(at).size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = gcr::fuzz::text_of(data, size);
  auto doc = gcr::parse_json_strict(text);
  if (!doc) return 0;
  gcr::fuzz::require(static_cast<std::size_t>(std::popcount(gcr::visible_gpu_mask(*doc))) <=
                     device_count(*doc));
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
