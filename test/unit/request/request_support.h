// Reading a spec's GPU request in unit tests: a spec from env entries, the request or the error.
#pragma once

#include <doctest/doctest.h>

#include "oci/spec_view.h"
#include "request/request.h"

namespace gcr::test {

inline Json spec_with(const std::vector<std::string>& env, const Json& extra = Json::object()) {
  Json spec = {{"ociVersion", "1.0.2"},
               {"process", {{"env", env}, {"capabilities", {{"bounding", Json::array()}}}}}};
  spec.merge_patch(extra);
  return spec;
}

inline Result<std::optional<GpuRequest>> request_of(const Json& spec, const Config& config = {}) {
  static Logger quiet("test");
  auto view = view_spec(spec);
  REQUIRE(view.ok());
  return read_gpu_request(*view, config, quiet);
}

inline GpuRequest must_request(const Json& spec, const Config& config = {}) {
  auto r = request_of(spec, config);
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  REQUIRE(r->has_value());
  return **r;
}

inline std::string error_of(const Json& spec, const Config& config = {}) {
  auto r = request_of(spec, config);
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

}  // namespace gcr::test
