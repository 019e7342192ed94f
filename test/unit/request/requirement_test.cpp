#include <doctest/doctest.h>

#include "request/requirement.h"

using gcr::RequirementFacts;

namespace {

std::optional<std::string> unmet(const std::string& text, const RequirementFacts& facts) {
  auto r = gcr::parse_requirement("NVIDIA_REQUIRE_CUDA", text);
  REQUIRE(r.ok());
  return gcr::unmet_alternative(*r, facts);
}

const RequirementFacts kHost{"12.4", "550.54.15", "8.0", "Tesla"};

}  // namespace

TEST_CASE("comparisons on dotted numbers; missing parts are zero") {
  CHECK_FALSE(unmet("cuda>=12.4", kHost));
  CHECK_FALSE(unmet("cuda>=12", kHost));
  CHECK(unmet("cuda>=12.5", kHost) == "cuda>=12.5");
  CHECK_FALSE(unmet("cuda<12.10", kHost));
  CHECK_FALSE(unmet("driver>=550.54", kHost));
  CHECK(unmet("driver<550.54.15", kHost));
  CHECK_FALSE(unmet("driver=550.54.15", kHost));
  CHECK_FALSE(unmet("driver!=550", kHost));
  CHECK_FALSE(unmet("arch>=8.0", kHost));
  CHECK(unmet("arch>8", kHost));
}

TEST_CASE("spaces are OR, commas are AND; the message is the first alternative") {
  const std::string cuda_image =
      "cuda>=13.0 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471";
  CHECK(unmet(cuda_image, kHost) == "cuda>=13.0");
  CHECK_FALSE(unmet(cuda_image, RequirementFacts{"11.4", "470.57.02", "8.0", "Tesla"}));
  CHECK_FALSE(unmet("cuda>=13.0 driver>=550", kHost));
  CHECK(unmet("cuda>=12.0,driver<500", kHost));
}

TEST_CASE("brand compares case-insensitively, with = and != only") {
  CHECK_FALSE(unmet("brand=TESLA", kHost));
  CHECK(unmet("brand!=tesla", kHost));
  CHECK_FALSE(gcr::parse_requirement("V", "brand>=tesla").ok());
}

TEST_CASE("unknown facts hold") {
  CHECK_FALSE(unmet("cuda>=99 ", RequirementFacts{}));
  CHECK_FALSE(
      unmet("arch>=9.0", RequirementFacts{"12.4", "550.54.15", std::nullopt, std::nullopt}));
}

TEST_CASE("invalid expressions are errors naming the variable") {
  for (const char* bad :
       {"cuda==12", "cuda>=", "gpu>=1", "cuda>=12.x", "cuda>=-1", ">=12", "cuda=>12"}) {
    CAPTURE(bad);
    auto r = gcr::parse_requirement("NVIDIA_REQUIRE_X", bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.rfind("invalid requirement NVIDIA_REQUIRE_X: ", 0) == 0);
  }
  CHECK_FALSE(gcr::parse_requirement("V", std::string(5000, 'c')).ok());
  auto empty = gcr::parse_requirement("V", "  ,, ");
  REQUIRE(empty.ok());
  CHECK_FALSE(gcr::unmet_alternative(*empty, kHost));
}

TEST_CASE("uses() tells which facts must be asked for") {
  auto r = gcr::parse_requirement("V", "cuda>=12 arch>=8.0,brand=tesla");
  REQUIRE(r.ok());
  CHECK(r->uses(gcr::Property::kCuda));
  CHECK(r->uses(gcr::Property::kBrand));
  CHECK_FALSE(r->uses(gcr::Property::kDriver));
}
