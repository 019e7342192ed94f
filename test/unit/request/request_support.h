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

// The request, after checking what lets `create` skip a spec: one in which no string could be
// part of a request asks for nothing.
inline Result<std::optional<GpuRequest>> request_of(const Json& spec, const Config& config = {}) {
  static Logger quiet("test");
  auto view = view_spec(spec);
  REQUIRE(view.ok());
  auto request = read_gpu_request(*view, config, quiet);
  auto may_ask = json_has_string(
      json_text(spec), [&](std::string_view s) { return could_be_request_part(s, config); });
  REQUIRE(may_ask.ok());
  if (!*may_ask) CHECK((request.ok() && !request->has_value()));
  return request;
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
