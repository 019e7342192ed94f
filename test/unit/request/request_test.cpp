#include <doctest/doctest.h>

#include <algorithm>

#include "request_support.h"
#include "test_support.h"

using gcr::Json;
using gcr::test::error_of;
using gcr::test::must_request;
using gcr::test::request_of;
using gcr::test::spec_with;

namespace {

bool asks_nothing(const Json& spec, const gcr::Config& config = {}) {
  auto r = request_of(spec, config);
  REQUIRE(r.ok());
  return !r->has_value();
}

}  // namespace

TEST_CASE("unset, empty and void ask for nothing") {
  CHECK(asks_nothing(spec_with({"PATH=/bin"})));
  CHECK(asks_nothing(spec_with({"NVIDIA_VISIBLE_DEVICES="})));
  CHECK(asks_nothing(spec_with({"NVIDIA_VISIBLE_DEVICES= , ,"})));
  CHECK(asks_nothing(spec_with({"NVIDIA_VISIBLE_DEVICES=void"})));
  CHECK(asks_nothing(spec_with({"NVIDIA_VISIBLE_DEVICES=0,void"})));
  CHECK(asks_nothing(Json{{"ociVersion", "1.0.2"}}));
}

TEST_CASE("IDs are trimmed, deduplicated and kept in order; all and none") {
  auto r = must_request(spec_with({"NVIDIA_VISIBLE_DEVICES= 1 ,GPU-abc,1,0000:3b:00.0,,"}));
  CHECK(r.device_ids == std::vector<std::string>{"1", "GPU-abc", "0000:3b:00.0"});
  CHECK_FALSE(r.all);
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=all"})).all);
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=ALL"})).all);
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=none"})).no_gpu());
  CHECK(error_of(spec_with({"NVIDIA_VISIBLE_DEVICES=none,1"})).find("`none` cannot be combined") !=
        std::string::npos);
  auto cdi = must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0,2"}));
  CHECK(cdi.cdi_names == std::vector<std::string>{"nvidia.com/gpu=0"});
  CHECK(cdi.device_ids == std::vector<std::string>{"2"});
}

TEST_CASE("NVIDIA's just-in-time names runtime.nvidia.com/gpu=<id> are the live GPUs' IDs") {
  auto r =
      must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=1,"
                              "runtime.nvidia.com/gpu=GPU-abc,1,runtime.nvidia.com/gpu=0:1"}));
  CHECK(r.device_ids == std::vector<std::string>{"1", "GPU-abc", "0:1"});
  CHECK(r.cdi_names.empty());
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=all"})).all);
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=none"})).no_gpu());
  // What follows the prefix is an ID, never a spec's name or `void`: no GPU is named so.
  CHECK(
      must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=void"})).device_ids ==
      std::vector<std::string>{"void"});
  auto nested =
      must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=nvidia.com/gpu=0"}));
  CHECK(nested.device_ids == std::vector<std::string>{"nvidia.com/gpu=0"});
  CHECK(nested.cdi_names.empty());
  // [requests] mode = "cdi" names IDs of the default kind; these stay live, as NVIDIA's.
  gcr::Config cdi;
  cdi.requests.mode = "cdi";
  auto mixed = must_request(
      spec_with({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=2,3,runtime.nvidia.com/gpu=0"}),
      cdi);
  CHECK(mixed.device_ids == std::vector<std::string>{"2", "0"});
  CHECK(mixed.cdi_names == std::vector<std::string>{"nvidia.com/gpu=3"});
  auto all = must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=runtime.nvidia.com/gpu=all"}), cdi);
  CHECK(all.all);
  CHECK(all.cdi_names.empty());
}

TEST_CASE("duplicate env entries: the last one wins, as in runc") {
  CHECK(asks_nothing(spec_with({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_VISIBLE_DEVICES="})));
  CHECK(
      must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=2"})).device_ids ==
      std::vector<std::string>{"2"});
}

TEST_CASE("names are case-sensitive") {
  CHECK(asks_nothing(spec_with({"nvidia_visible_devices=all"})));
}

TEST_CASE("capabilities: default, all, lists, unknown and unsupported") {
  using gcr::Capability;
  auto def = must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0"}));
  CHECK(def.capabilities.to_string() == "compute,utility");
  auto all =
      must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all"}));
  CHECK(all.capabilities.to_string() == "compute,compat32,display,graphics,ngx,utility,video");
  auto some = must_request(
      spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES= video , graphics"}));
  CHECK(some.capabilities.to_string() == "graphics,video");
  CHECK(error_of(
            spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,../x"})) ==
        "NVIDIA_DRIVER_CAPABILITIES: unknown driver capability `../x`");
  gcr::Config limited;
  limited.requests.supported_capabilities = {"utility"};
  CHECK(error_of(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute"}),
                 limited)
            .find("not in [requests] supported-capabilities") != std::string::npos);
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0"}), limited).capabilities.to_string() ==
        "utility");
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all"}),
                     limited)
            .capabilities.to_string() == "utility");
}

TEST_CASE(
    "requirements: every NVIDIA_REQUIRE_* but JETPACK, the legacy CUDA_VERSION rule, and the "
    "switches") {
  auto r = must_request(
      spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.0",
                 "NVIDIA_REQUIRE_ARCH=arch>=7.0", "NVIDIA_REQUIRE_JETPACK=csv-mounts=all"}));
  REQUIRE(r.requirements.size() == 2);
  CHECK(r.requirements[0].variable == "NVIDIA_REQUIRE_ARCH");
  CHECK(r.requirements[1].variable == "NVIDIA_REQUIRE_CUDA");
  auto legacy = must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "CUDA_VERSION=11.4.2"}));
  REQUIRE(legacy.requirements.size() == 1);
  CHECK(legacy.requirements[0].text == "cuda>=11.4");
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "CUDA_VERSION=11.4.2",
                                "NVIDIA_REQUIRE_CUDA=cuda>=10"}))
            .requirements.size() == 1);
  CHECK(error_of(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "CUDA_VERSION=eleven"}))
            .find("CUDA_VERSION") != std::string::npos);
  // Semantic versions as NVIDIA's toolkit reads them: a `v`, the minor and patch left out.
  for (const auto& [given, text] : std::vector<std::pair<std::string, std::string>>{
           {"12", "cuda>=12.0"}, {"v12.4", "cuda>=12.4"}, {"12.4.1-rc1", "cuda>=12.4"}}) {
    const std::string cuda = given;  // clang 14 captures no structured binding
    CAPTURE(cuda);
    const auto short_form =
        must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "CUDA_VERSION=" + cuda}));
    REQUIRE(short_form.requirements.size() == 1);
    CHECK(short_form.requirements[0].text == std::string(text));
  }
  for (const std::string cuda : {"12.", "12.4.1.2", "v", ".4"}) {
    CAPTURE(cuda);
    CHECK(error_of(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "CUDA_VERSION=" + cuda}))
              .find("is not a version") != std::string::npos);
  }
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=99",
                                "NVIDIA_DISABLE_REQUIRE=true"}))
            .requirements.empty());
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=99",
                                "NVIDIA_DISABLE_REQUIRE=nope"}))
            .requirements.size() == 1);
  gcr::Config disabled;
  disabled.requests.disable_require = true;
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=99"}),
                     disabled)
            .requirements.empty());
  CHECK(error_of(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda==12"}))
            .find("NVIDIA_REQUIRE_CUDA") != std::string::npos);
}

TEST_CASE("unprivileged policy: CAP_SYS_ADMIN in the bounding set, exactly") {
  gcr::Config strict;
  strict.requests.accept_env_when_unprivileged = false;
  const std::vector<std::string> env{"NVIDIA_VISIBLE_DEVICES=all"};
  CHECK(asks_nothing(spec_with(env), strict));
  CHECK(must_request(spec_with(env)).all);
  const auto caps = [&](const Json& c) {
    return spec_with(env, {{"process", {{"capabilities", c}}}});
  };
  CHECK(must_request(caps({{"bounding", {"CAP_SYS_ADMIN"}}}), strict).all);
  CHECK(asks_nothing(caps({{"bounding", {"cap_sys_admin"}}}), strict));
  CHECK(
      asks_nothing(caps({{"effective", {"CAP_SYS_ADMIN"}}, {"bounding", Json::array()}}), strict));
}

TEST_CASE("[requests] swarm-resource: Swarm's variables, when set, name the GPUs instead") {
  gcr::Config swarm;
  swarm.requests.swarm_resource = {"DOCKER_RESOURCE_GPU", "DOCKER_RESOURCE_NVIDIA-GPU"};
  // Every one set, in the configured order; NVIDIA_VISIBLE_DEVICES (the image's `all`) unread.
  auto r = must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=all", "DOCKER_RESOURCE_NVIDIA-GPU=GPU-b",
                                   "DOCKER_RESOURCE_GPU=GPU-a,GPU-c"}),
                        swarm);
  CHECK(r.source == gcr::GpuRequest::Source::kEnv);
  CHECK(r.device_ids == std::vector<std::string>{"GPU-a", "GPU-c", "GPU-b"});
  CHECK_FALSE(r.all);
  // Set but empty: nothing, as NVIDIA's runtime reads it, not NVIDIA_VISIBLE_DEVICES.
  CHECK(asks_nothing(spec_with({"NVIDIA_VISIBLE_DEVICES=all", "DOCKER_RESOURCE_GPU="}), swarm));
  // Only a variable alone in the spec still asks (the spec is read, not skipped).
  CHECK(must_request(spec_with({"DOCKER_RESOURCE_GPU=1"}), swarm).device_ids ==
        std::vector<std::string>{"1"});
  // None set: NVIDIA_VISIBLE_DEVICES; not configured: Swarm's variable is nothing.
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=all"}), swarm).all);
  CHECK(asks_nothing(spec_with({"DOCKER_RESOURCE_GPU=1"})));
  // A wrong list is named with the variable; the unprivileged rule applies as to the others.
  const auto both = error_of(spec_with({"DOCKER_RESOURCE_GPU=none,1"}), swarm);
  CHECK(both.find("DOCKER_RESOURCE_GPU") != std::string::npos);
  CHECK(both.find("`none` cannot be combined") != std::string::npos);
  // The plugin's marker folder means "see the markers" in NVIDIA_VISIBLE_DEVICES alone.
  CHECK(must_request(spec_with({"DOCKER_RESOURCE_GPU=/var/run/nvidia-container-devices"}), swarm)
            .device_ids == std::vector<std::string>{"/var/run/nvidia-container-devices"});
  swarm.requests.accept_env_when_unprivileged = false;
  CHECK(asks_nothing(spec_with({"DOCKER_RESOURCE_GPU=1"}), swarm));
}

TEST_CASE(
    "volume-mount markers: only from /dev/null, only under the marker dir, only when enabled") {
  gcr::Config marks;
  marks.requests.accept_volume_mounts = true;
  const auto with_mounts = [](const Json& mounts) {
    return spec_with({"PATH=/bin"}, {{"mounts", mounts}});
  };
  const Json good = Json::array(
      {{{"source", "/dev/null"}, {"destination", "/var/run/nvidia-container-devices/2"}},
       {{"source", "//dev/./null"}, {"destination", "/var/run/nvidia-container-devices/GPU-x"}},
       {{"source", "/dev/null"},
        {"destination", "/var/run/nvidia-container-devices/cdi/nvidia.com/gpu/1"}},
       {{"source", "/dev/null"},
        {"destination", "/var/run/nvidia-container-devices/cdi/nvidia.com/gpu=3"}}});
  auto r = must_request(with_mounts(good), marks);
  CHECK(r.source == gcr::GpuRequest::Source::kVolumeMount);
  CHECK(r.device_ids == std::vector<std::string>{"2", "GPU-x"});
  CHECK(r.cdi_names == std::vector<std::string>{"nvidia.com/gpu=1", "nvidia.com/gpu=3"});
  CHECK(asks_nothing(with_mounts(good)));
  CHECK(asks_nothing(
      with_mounts(Json::array(
          {{{"source", "/dev/null"}, {"destination", "/var/run/nvidia-container-devicesall"}}})),
      marks));
  CHECK(asks_nothing(
      with_mounts(Json::array(
          {{{"source", "/tmp/x"}, {"destination", "/var/run/nvidia-container-devices/all"}}})),
      marks));
  CHECK(asks_nothing(
      with_mounts(Json::array(
          {{{"source", "/dev/null"}, {"destination", "/var/run/nvidia-container-devices/a/b"}}})),
      marks));
}

TEST_CASE("annotations win; their values must be qualified CDI names") {
  const Json annotated = spec_with({"NVIDIA_VISIBLE_DEVICES=3"},
                                   {{"annotations",
                                     {{"cdi.k8s.io/b", "nvidia.com/gpu=1"},
                                      {"cdi.k8s.io/a", "nvidia.com/gpu=0,nvidia.com/gpu=1"},
                                      {"other/x", "junk"}}}});
  auto r = must_request(annotated);
  CHECK(r.source == gcr::GpuRequest::Source::kAnnotation);
  CHECK(r.cdi_names == std::vector<std::string>{"nvidia.com/gpu=0", "nvidia.com/gpu=1"});
  CHECK(error_of(
            spec_with({}, {{"annotations", {{"cdi.k8s.io/x", "management.nvidia.com/gpu=all,0"}}}}))
            .find("`0` is not a qualified CDI device name") != std::string::npos);
  // A live GPU is asked for where the environment's privilege rule holds, not by annotation.
  CHECK(
      error_of(spec_with({}, {{"annotations", {{"cdi.k8s.io/x", "runtime.nvidia.com/gpu=0"}}}})) ==
      "annotation cdi.k8s.io/x: `runtime.nvidia.com/gpu=0`: runtime.nvidia.com/gpu=<id> names are "
      "accepted in the environment's device list only");
}

TEST_CASE("MIG config and monitor need a privileged container and `all`") {
  CHECK(error_of(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES=all"}))
            .find("privileged") != std::string::npos);
  const Json privileged = {{"process", {{"capabilities", {{"bounding", {"CAP_SYS_ADMIN"}}}}}}};
  CHECK(must_request(
            spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_MONITOR_DEVICES=all"}, privileged))
            .mig_monitor);
  CHECK(error_of(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES=0"}, privileged))
            .find("only `all`") != std::string::npos);
  // NVIDIA's spellings: `all` in any case, empty items skipped.
  CHECK(must_request(
            spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES=ALL,"}, privileged))
            .mig_config);
  CHECK_FALSE(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES=, ,"},
                                     privileged))
                  .mig_config);
}

TEST_CASE(
    "a request of CDI devices only does not read the live GPUs' capabilities and MIG access") {
  // The device plugin's CDI strategies on an image with its own variables, as NVIDIA's CDI modes.
  const std::vector<std::string> image{"NVIDIA_DRIVER_CAPABILITIES=compute,utility,../x",
                                       "NVIDIA_MIG_MONITOR_DEVICES=all",
                                       "NVIDIA_MIG_CONFIG_DEVICES=0"};
  auto annotated = must_request(
      spec_with(image, {{"annotations", {{"cdi.k8s.io/gpu", "nvidia.com/gpu=GPU-4b3b6e22"}}}}));
  CHECK(annotated.cdi_names == std::vector<std::string>{"nvidia.com/gpu=GPU-4b3b6e22"});
  CHECK_FALSE(annotated.live());
  CHECK_FALSE(annotated.mig_monitor);
  CHECK_FALSE(annotated.mig_config);
  auto env = image;
  env.emplace_back("NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0");
  env.emplace_back("NVIDIA_IMEX_CHANNELS=3");
  auto named = must_request(spec_with(env));
  CHECK_FALSE(named.live());
  CHECK(named.imex_channels == std::vector<unsigned>{3});
  // A live GPU beside the names: the variables are its, and read as before.
  env.back() = "NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0,1";
  CHECK(error_of(spec_with(env)) == "NVIDIA_DRIVER_CAPABILITIES: unknown driver capability `../x`");
}

TEST_CASE("the request says whether the container is privileged, for what only it may get") {
  const std::vector<std::string> env{"NVIDIA_VISIBLE_DEVICES=management.nvidia.com/gpu=all"};
  CHECK_FALSE(must_request(spec_with(env)).privileged);
  const Json privileged = {{"process", {{"capabilities", {{"bounding", {"CAP_SYS_ADMIN"}}}}}}};
  const auto request = must_request(spec_with(env, privileged));
  CHECK(request.privileged);
  CHECK(request.cdi_names == std::vector<std::string>{"management.nvidia.com/gpu=all"});
}

TEST_CASE("spec shapes runc would read differently are refused") {
  const auto shape_error = [](const Json& spec) {
    auto v = gcr::view_spec(spec);
    REQUIRE_FALSE(v.ok());
    return v.error().message;
  };
  CHECK(shape_error({{"process", {{"env", "A=1"}}}}) ==
        "invalid spec: `process.env` must be a list of strings");
  CHECK(shape_error({{"process", {{"env", {"NOEQUALS"}}}}}).find("is not NAME=value") !=
        std::string::npos);
  CHECK(shape_error({{"process", {{"env", {"=x"}}}}}).find("is not NAME=value") !=
        std::string::npos);
  CHECK(shape_error({{"process", Json::object()}, {"PROCESS", Json::object()}}) ==
        "invalid spec: `PROCESS` differs from `process` only in case");
  CHECK(shape_error({{"process", {{"Env", {"A=1"}}}}}).find("`process.Env` differs from `env`") !=
        std::string::npos);
  CHECK(shape_error({{"process", {{"capabilities", {{"Bounding", {"CAP_SYS_ADMIN"}}}}}}})
            .find("differs from `bounding`") != std::string::npos);
  CHECK(shape_error({{"mounts", {{{"source", "/dev/null"}}}}})
            .find("`mounts` entries need a string `destination`") != std::string::npos);
  CHECK(shape_error({{"annotations", {{"a", 1}}}}) ==
        "invalid spec: `annotations.a` must be a string");
  CHECK(shape_error({{"hooks", {{"prestart", {{{"args", Json::array()}}}}}}})
            .find("need a string `path`") != std::string::npos);
  CHECK(shape_error({{"linux", {{"devices", {1}}}}}).find("must be a list of objects") !=
        std::string::npos);
  CHECK(shape_error({{"root", {{"path", 5}}}}) == "invalid spec: `root.path` must be a string");
}

TEST_CASE("[requests] mode = cdi: unqualified IDs become names of the default kind") {
  gcr::Config cdi;
  cdi.requests.mode = "cdi";
  auto r = must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=all,1,vendor.com/x=y"}), cdi);
  CHECK(r.cdi_names ==
        std::vector<std::string>{"vendor.com/x=y", "nvidia.com/gpu=all", "nvidia.com/gpu=1"});
  CHECK(r.device_ids.empty());
  CHECK_FALSE(r.all);
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=none"}), cdi).cdi_names ==
        std::vector<std::string>{"nvidia.com/gpu=none"});
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=2"}), cdi).cdi_names ==
        std::vector<std::string>{"nvidia.com/gpu=2"});
}

TEST_CASE("IMEX channels: numbers, deduplicated; `all` ignored; bad ones named") {
  const auto channels = [](const std::vector<std::string>& extra_env,
                           const gcr::Config& config = {}) {
    std::vector<std::string> env{"NVIDIA_VISIBLE_DEVICES=0"};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    return must_request(spec_with(env), config).imex_channels;
  };
  CHECK(channels({}).empty());
  CHECK(channels({"NVIDIA_IMEX_CHANNELS= 3, 0 ,3,,1048575"}) ==
        std::vector<unsigned>{3, 0, 1048575});
  CHECK(channels({"NVIDIA_IMEX_CHANNELS=all"}).empty());
  CHECK(channels({"NVIDIA_IMEX_CHANNELS=none"}).empty());
  CHECK(channels({"NVIDIA_IMEX_CHANNELS=1,void"}).empty());
  CHECK(error_of(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=1048576"})) ==
        "NVIDIA_IMEX_CHANNELS: `1048576` is not an IMEX channel (0-1048575)");
  CHECK(error_of(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=0,-1"})) ==
        "NVIDIA_IMEX_CHANNELS: `-1` is not an IMEX channel (0-1048575)");
  CHECK(asks_nothing(spec_with({"NVIDIA_IMEX_CHANNELS=0"})));
  gcr::Config strict;
  strict.requests.accept_env_when_unprivileged = false;
  const Json privileged = {{"process", {{"capabilities", {{"bounding", {"CAP_SYS_ADMIN"}}}}}}};
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=2"}, privileged),
                     strict)
            .imex_channels == std::vector<unsigned>{2});
}

// The list is the image's: every channel there is, each after a thousand `all`s, is read in
// one pass (a search per channel would take hours) with one warning for all of them.
TEST_CASE("IMEX channels: a list of every channel is read in order, with one warning for `all`") {
  std::string value;
  for (int i = 0; i < 1000; ++i) value += "all,";
  std::vector<unsigned> every;
  for (unsigned c = 0; c <= 1048575; ++c) {
    value += std::to_string(c) + ",";
    every.push_back(c);
  }
  value += "7,all";
  gcr::test::TempDir dir;
  gcr::Logger logger("test");
  logger.set_log_file(dir / "log");
  auto view =
      gcr::view_spec(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=" + value}));
  REQUIRE(view.ok());
  auto request = gcr::read_gpu_request(*view, {}, logger);
  REQUIRE(request.ok());
  REQUIRE(request->has_value());
  CHECK((*request)->imex_channels == every);
  const std::string log = gcr::test::read_file(dir / "log");
  CHECK(std::count(log.begin(), log.end(), '\n') == 1);
  CHECK(log.find("NVIDIA_IMEX_CHANNELS: `all` is ignored; name the IMEX channels") !=
        std::string::npos);
}

TEST_CASE("IMEX channel markers win over the environment when markers are accepted") {
  gcr::Config marks;
  marks.requests.accept_volume_mounts = true;
  marks.requests.accept_env_when_unprivileged = false;
  const Json mounts = {
      {"mounts",
       {{{"source", "/dev/null"}, {"destination", "/var/run/nvidia-container-devices/1"}},
        {{"source", "/dev/null"}, {"destination", "/var/run/nvidia-container-devices/imex/7"}},
        {{"source", "/dev/null"}, {"destination", "/var/run/nvidia-container-devices/imex/2"}}}}};
  const auto r = must_request(spec_with({"NVIDIA_IMEX_CHANNELS=5"}, mounts), marks);
  CHECK(r.device_ids == std::vector<std::string>{"1"});
  CHECK(r.imex_channels == std::vector<unsigned>{7, 2});
  const Json one_gpu = {
      {"mounts",
       {{{"source", "/dev/null"}, {"destination", "/var/run/nvidia-container-devices/1"}}}}};
  CHECK(must_request(spec_with({"NVIDIA_IMEX_CHANNELS=5"}, one_gpu), marks).imex_channels.empty());
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=5"}, mounts))
            .imex_channels == std::vector<unsigned>{5});
}

TEST_CASE("NVIDIA_GDS, _MOFED, _GDRCOPY, _NVSWITCH: exactly `enabled` turns each on") {
  using gcr::GatedFeature;
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0"})).features.empty());
  CHECK(must_request(
            spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_NVSWITCH=enabled", "NVIDIA_GDS=enabled",
                       "NVIDIA_MOFED=true", "NVIDIA_GDRCOPY=enabled "}))
            .features == std::vector<GatedFeature>{GatedFeature::kGds, GatedFeature::kNvswitch});
  CHECK(must_request(spec_with({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MOFED=enabled",
                                "NVIDIA_GDRCOPY=enabled"}))
            .features == std::vector<GatedFeature>{GatedFeature::kMofed, GatedFeature::kGdrcopy});
  CHECK(asks_nothing(spec_with({"NVIDIA_GDS=enabled"})));
  gcr::Config strict;
  strict.requests.accept_env_when_unprivileged = false;
  const Json privileged = {{"process", {{"capabilities", {{"bounding", {"CAP_SYS_ADMIN"}}}}}}};
  const Json annotated = {{"annotations", {{"cdi.k8s.io/x", "nvidia.com/gpu=0"}}}};
  CHECK(must_request(spec_with({"NVIDIA_MOFED=enabled"}, annotated), strict).features.empty());
  Json both = annotated;
  both.merge_patch(privileged);
  CHECK(must_request(spec_with({"NVIDIA_MOFED=enabled"}, both), strict).features ==
        std::vector<GatedFeature>{GatedFeature::kMofed});
}

TEST_CASE("NVIDIA_VISIBLE_DEVICES=/var/run/nvidia-container-devices means: see the markers") {
  const Json spec = spec_with({"NVIDIA_VISIBLE_DEVICES=/var/run/nvidia-container-devices"});
  CHECK(error_of(spec) ==
        "NVIDIA_VISIBLE_DEVICES=/var/run/nvidia-container-devices: the GPUs were handed as volume "
        "mounts, which this runtime reads only with [requests] accept-volume-mounts = true");
  gcr::Config markers;
  markers.requests.accept_volume_mounts = true;
  CHECK(asks_nothing(spec, markers));
  const Json marked = spec_with(
      {"NVIDIA_VISIBLE_DEVICES=/var/run/nvidia-container-devices"},
      {{"mounts",
        {{{"destination", "/var/run/nvidia-container-devices/GPU-1"}, {"source", "/dev/null"}}}}});
  CHECK(must_request(marked, markers).device_ids == std::vector<std::string>{"GPU-1"});
}

TEST_CASE("the strings a request can be made of") {
  gcr::Config config;
  for (const char* part :
       {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES", "cdi.k8s.io/gpu",
        "/var/run/nvidia-container-devices/0", "/usr/bin/nvidia-container-cli"}) {
    CAPTURE(part);
    CHECK(gcr::could_be_request_part(part, config));
  }
  for (const char* other : {"PATH=/bin", "nvidia_visible_devices=0", "x NVIDIA_", "cdi.k8s.io",
                            "example.com/gpu", "/dev/null"}) {
    CAPTURE(other);
    CHECK_FALSE(gcr::could_be_request_part(other, config));
  }
  config.requests.annotation_prefixes = {"example.com/"};
  CHECK(gcr::could_be_request_part("example.com/gpu", config));
  CHECK_FALSE(gcr::could_be_request_part("cdi.k8s.io/gpu", config));
  config.requests.annotation_prefixes = {""};  // every key could be one
  CHECK(gcr::could_be_request_part("anything", config));
}
