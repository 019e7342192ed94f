// containerd's `ctr run --gpus` hook read as the container's GPU request.
#include <doctest/doctest.h>

#include "request_support.h"

using gcr::Json;
using gcr::test::error_of;
using gcr::test::must_request;
using gcr::test::request_of;

namespace {

// The hook exactly as Debian's ctr 1.6 writes it for `--gpus 1`.
std::vector<std::string> ctr_hook(const std::vector<std::string>& flags = {"--device=1"}) {
  std::vector<std::string> args{"containerd",   "oci-hook", "--", "/usr/bin/nvidia-container-cli",
                                "--load-kmods", "configure"};
  args.insert(args.end(), flags.begin(), flags.end());
  for (const char* a : {"--compute", "--compat32", "--graphics", "--utility", "--video",
                        "--display", "--pid={{pid}}", "{{rootfs}}"})
    args.emplace_back(a);
  return args;
}

// `kind`: ctr 1.x's prestart, or 2.1's createRuntime.
Json spec_with_hook(const std::vector<std::string>& hook_args,
                    const std::vector<std::string>& env = {"PATH=/bin"},
                    const std::string& kind = "prestart") {
  return Json{{"ociVersion", "1.0.2"},
              {"process", {{"env", env}, {"capabilities", {{"bounding", Json::array()}}}}},
              {"hooks",
               {{kind, Json::array({Json{{"path", "/usr/bin/containerd"},
                                         {"args", hook_args},
                                         {"env", Json::array({"PATH=/usr/bin"})}}})}}}};
}

}  // namespace

TEST_CASE("ctr --gpus: the hook's devices and capability flags are the request") {
  const auto r = must_request(spec_with_hook(ctr_hook()));
  CHECK(r.source == gcr::GpuRequest::Source::kCliHook);
  CHECK(r.device_ids == std::vector<std::string>{"1"});
  CHECK(r.capabilities.to_string() == "compute,compat32,display,graphics,utility,video");
  CHECK(r.requirements.empty());
  CHECK(must_request(spec_with_hook(ctr_hook({"--device", "0,2"}))).device_ids ==
        std::vector<std::string>{"0", "2"});
  CHECK(must_request(spec_with_hook(ctr_hook({"-d", "all"}))).all);
  CHECK(must_request(spec_with_hook(ctr_hook({}))).no_gpu());
}

// The hook's arguments are the spec's: 200,000 devices, then each again, are read in one pass
// (a search per item took minutes), each once, in order.
TEST_CASE("ctr --gpus: a hook naming 200,000 devices twice gives each once, in order") {
  std::string list;
  std::vector<std::string> ids;
  for (int i = 0; i < 200000; ++i) {
    ids.push_back(std::to_string(i));
    list += ids.back() + ",";
  }
  const auto r = must_request(spec_with_hook(ctr_hook({"--device=" + list, "--device=" + list})));
  CHECK(r.device_ids == ids);
}

TEST_CASE("ctr --gpus of containerd 2.1: the same hook as a createRuntime hook") {
  const auto r = must_request(spec_with_hook(ctr_hook({"--device=0"}), {}, "createRuntime"));
  CHECK(r.source == gcr::GpuRequest::Source::kCliHook);
  CHECK(r.device_ids == std::vector<std::string>{"0"});
  // A createContainer or poststart hook of that shape is not ctr's.
  for (const char* kind : {"createContainer", "poststart"}) {
    const auto other = request_of(spec_with_hook(ctr_hook(), {}, kind));
    REQUIRE(other.ok());
    CHECK_FALSE(other->has_value());
  }
}

TEST_CASE(
    "ctr --gpus: the hook wins over the image's NVIDIA_VISIBLE_DEVICES, and is not an env "
    "request") {
  const auto spec = spec_with_hook(
      ctr_hook(), {"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=compute"});
  const auto r = must_request(spec);
  CHECK_FALSE(r.all);
  CHECK(r.device_ids == std::vector<std::string>{"1"});
  CHECK(r.capabilities.has(gcr::Capability::kGraphics));
  // The unprivileged-env policy is about what images ask; ctr's command line is not an image.
  gcr::Config strict;
  strict.requests.accept_env_when_unprivileged = false;
  CHECK(must_request(spec, strict).device_ids == std::vector<std::string>{"1"});
}

TEST_CASE("ctr --gpus: --require flags and the image's requirements both apply") {
  const auto r = must_request(spec_with_hook(ctr_hook({"--device=0", "--require=cuda>=12.0"}),
                                             {"NVIDIA_REQUIRE_ARCH=arch>=8.0"}));
  REQUIRE(r.requirements.size() == 2);
  CHECK(r.requirements[0].variable == "nvidia-container-cli --require");
  gcr::Config off;
  off.requests.disable_require = true;
  CHECK(must_request(spec_with_hook(ctr_hook({"--require=cuda>=12.0"})), off).requirements.empty());
}

TEST_CASE("ctr --gpus: capabilities outside supported-capabilities are withheld, not fatal") {
  gcr::Config config;
  config.requests.supported_capabilities = {"compute", "utility"};
  CHECK(must_request(spec_with_hook(ctr_hook()), config).capabilities.to_string() ==
        "compute,utility");
}

TEST_CASE("ctr --gpus: a malformed hook is an error naming what is wrong") {
  CHECK(error_of(spec_with_hook(ctr_hook({"--gpus=1"}))) ==
        "containerd's --gpus hook (nvidia-container-cli): unknown configure flag `--gpus=1`");
  CHECK(error_of(spec_with_hook({"containerd", "oci-hook", "--", "nvidia-container-cli", "list"}))
            .find("`list` is not configure") != std::string::npos);
  CHECK(error_of(spec_with_hook(ctr_hook({"--mig-config=0"}))) ==
        "nvidia-container-cli --mig-config: only `all` is supported, not `0`");
}

TEST_CASE("other prestart hooks and the legacy hook are not ctr's") {
  auto spec = spec_with_hook({"nvidia-container-runtime-hook", "prestart"});
  auto r = request_of(spec);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
  spec = spec_with_hook({"containerd", "oci-hook", "--", "/usr/bin/other", "configure"});
  r = request_of(spec);
  REQUIRE(r.ok());
  CHECK_FALSE(r->has_value());
}

TEST_CASE("hook args must be strings") {
  Json spec = spec_with_hook(ctr_hook());
  spec["hooks"]["prestart"][0]["args"] = Json::array({1, 2});
  CHECK_FALSE(gcr::view_spec(spec).ok());
}
