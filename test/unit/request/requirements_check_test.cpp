// Which facts a requirement check asks for, and what it concludes.
#include <doctest/doctest.h>

#include "request/requirements_check.h"

namespace {

struct CountingProbe : gcr::DriverProbe {
  int cuda_calls = 0;
  int gpu_calls = 0;
  gcr::Result<std::optional<std::string>> cuda_version(const std::string&) override {
    ++cuda_calls;
    return std::optional<std::string>("12.4");
  }
  gcr::Result<std::map<std::string, gcr::GpuFacts>> gpu_facts() override {
    ++gpu_calls;
    return std::map<std::string, gcr::GpuFacts>{{"GPU-a", {"8.0", "Tesla", {}}},
                                                {"GPU-b", {"7.0", "GeForce", {}}}};
  }
};

std::vector<gcr::Requirement> reqs(const std::string& text) {
  auto r = gcr::parse_requirement("NVIDIA_REQUIRE_CUDA", text);
  REQUIRE(r.ok());
  return {*r};
}

std::vector<gcr::Gpu> two_gpus() {
  gcr::Gpu a;
  a.uuid = "GPU-a";
  gcr::Gpu b;
  b.index = 1;
  b.uuid = "GPU-b";
  return {a, b};
}

const std::string kCudaImage =
    "cuda>=12.0 brand=tesla,driver>=470,driver<471 brand=unknown,driver>=470,driver<471";

}  // namespace

TEST_CASE("a CUDA image on a new enough driver never asks NVML") {
  CountingProbe probe;
  CHECK(
      gcr::check_requirements(reqs(kCudaImage), two_gpus(), std::string("550.54.15"), probe).ok());
  CHECK(probe.cuda_calls == 1);
  CHECK(probe.gpu_calls == 0);
}

TEST_CASE("an impossible requirement fails without asking NVML") {
  CountingProbe probe;
  auto s = gcr::check_requirements(reqs("cuda>=13.0 brand=tesla,driver>=470,driver<471"),
                                   two_gpus(), std::string("550.54.15"), probe);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message ==
        "requirement not met: cuda>=13.0 (NVIDIA_REQUIRE_CUDA; this host has cuda 12.4, driver "
        "550.54.15)");
  CHECK(probe.gpu_calls == 0);
}

TEST_CASE("arch and brand are asked once, and checked for every selected GPU") {
  CountingProbe probe;
  CHECK(
      gcr::check_requirements(reqs("arch>=7.0"), two_gpus(), std::string("550.54.15"), probe).ok());
  CHECK(probe.gpu_calls == 1);
  CHECK(probe.cuda_calls == 0);
  auto s =
      gcr::check_requirements(reqs("brand=tesla"), two_gpus(), std::string("550.54.15"), probe);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message ==
        "requirement not met: brand=tesla (NVIDIA_REQUIRE_CUDA; GPU 1 has brand GeForce)");
  CHECK(gcr::check_requirements(reqs("brand=tesla"), {}, std::string("550.54.15"), probe).ok());
}

TEST_CASE("without a driver, driver and cuda are unknown and count as met") {
  CountingProbe probe;
  CHECK(gcr::check_requirements(reqs("cuda>=99 driver>=999"), {}, std::nullopt, probe).ok());
  CHECK(probe.cuda_calls == 0);
}
