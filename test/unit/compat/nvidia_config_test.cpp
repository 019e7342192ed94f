// NVIDIA's config.toml imported as ours (gpu-ctk config import).
#include <doctest/doctest.h>

#include <boost/filesystem.hpp>

#include "compat/nvidia_config.h"
#include "oci/spec_view.h"
#include "request/request.h"
#include "test_support.h"
#include "toml/toml.h"

using gcr::Json;

namespace {

gcr::ImportedConfig imported(const std::string& text) {
  auto r = gcr::import_nvidia_config(text, "nvidia.toml");
  REQUIRE_MESSAGE(r.ok(), r.error().message);
  return *r;
}

std::string config_error(const std::string& text) {
  auto r = gcr::import_nvidia_config(text, "nvidia.toml");
  REQUIRE_FALSE(r.ok());
  return r.error().message;
}

// Every key a request or the runtime reads, as one string to compare.
std::string summary(const gcr::Config& c) {
  Json j{{"runtimes", c.runtime.runtimes},
         {"log-file", c.runtime.log_file},
         {"log-level", static_cast<int>(c.runtime.log_level)},
         {"root", c.driver.root},
         {"dev-root", c.driver.dev_root},
         {"env-unprivileged", c.requests.accept_env_when_unprivileged},
         {"volume-mounts", c.requests.accept_volume_mounts},
         {"prefixes", c.requests.annotation_prefixes},
         {"caps", c.requests.supported_capabilities},
         {"disable-require", c.requests.disable_require},
         {"mode", c.requests.mode},
         {"swarm", c.requests.swarm_resource},
         {"spec-dirs", c.cdi.spec_dirs},
         {"kind", c.cdi.default_kind},
         {"ctk", c.hooks.ctk_path},
         {"ldconfig", c.hooks.ldconfig}};
  return j.dump();
}

gcr::Config ours(const Json& doc) {
  auto c = gcr::config_from_json(doc);
  REQUIRE_MESSAGE(c.ok(), c.error().message);
  return *c;
}

// What each golden spec asks for under `config`: the request or the error, as text.
std::string decisions(const gcr::Config& config) {
  const gcr::Logger quiet("test");
  std::string out;
  for (const auto& entry :
       boost::filesystem::directory_iterator(gcr::test::test_source("data/golden"))) {
    auto view =
        gcr::view_spec(Json::parse(gcr::test::read_file(entry.path().string() + "/input.json")));
    REQUIRE(view.ok());
    const auto r = gcr::read_gpu_request(*view, config, quiet);
    out += entry.path().filename().string() + ": ";
    if (!r) {
      out += r.error().message;
    } else if (!*r) {
      out += "nothing";
    } else {
      const auto& q = **r;
      out += Json{{"all", q.all},
                  {"ids", q.device_ids},
                  {"cdi", q.cdi_names},
                  {"caps", q.capabilities.to_string()},
                  {"requirements", q.requirements.size()}}
                 .dump();
    }
    out += "\n";
  }
  return out;
}

}  // namespace

TEST_CASE("NVIDIA's default file is our defaults; what has no equivalent is listed") {
  const auto r =
      imported(gcr::test::read_file(gcr::test::test_source("data/nvidia/config-default.toml")));
  CHECK(summary(r.config) == summary(gcr::Config{}));
  CHECK(decisions(r.config) == decisions(gcr::Config{}));
  CHECK(r.toml.find("supported-capabilities = [\"compute\", \"compat32\", \"display\", "
                    "\"graphics\", \"ngx\", \"utility\", \"video\"]  # "
                    "supported-driver-capabilities\n") != std::string::npos);
  CHECK(r.toml.find("#   nvidia-container-cli.load-kmods = true: kernel modules are never "
                    "loaded\n") != std::string::npos);
  CHECK(r.toml.find("#   nvidia-ctk.path = \"nvidia-ctk\": the hooks run gpu-ctk") !=
        std::string::npos);
}

TEST_CASE("a customised file: each choice carried to our key, same decisions on the golden specs") {
  const auto r =
      imported(gcr::test::read_file(gcr::test::test_source("data/nvidia/config-custom.toml")));
  const auto expected =
      ours(Json{{"runtime",
                 {{"runtimes", {"docker-runc", "runc"}},
                  {"log-file", "/var/log/nvidia-container-runtime.log"},
                  {"log-level", "debug"}}},
                {"driver", {{"root", "/run/nvidia/driver"}, {"dev-root", "/run/nvidia/driver"}}},
                {"requests",
                 {{"accept-env-when-unprivileged", false},
                  {"accept-volume-mounts", true},
                  {"annotation-prefixes", {"cdi.k8s.io/", "nvidia.cdi.k8s.io/"}},
                  {"supported-capabilities", {"compute", "utility"}},
                  {"disable-require", true},
                  {"mode", "cdi"},
                  {"swarm-resource", {"DOCKER_RESOURCE_GPU"}}}},
                {"cdi", {{"spec-dirs", {"/etc/cdi", "/var/run/cdi", "/opt/cdi"}}}},
                {"hooks", {{"ldconfig", "@/sbin/ldconfig.real"}}}});
  CHECK(summary(r.config) == summary(expected));
  CHECK(decisions(r.config) == decisions(expected));
  CHECK(decisions(r.config) != decisions(gcr::Config{}));
  for (const char* key : {"nvidia-container-cli.no-cgroups", "nvidia-container-cli.debug",
                          "features.allow-cuda-compat-libs"}) {
    CHECK_MESSAGE(r.toml.find(std::string("#   ") + key) != std::string::npos, key);
  }
  // What is printed is a file of ours that means the same.
  auto table = gcr::parse_toml(r.toml, "imported.toml");
  REQUIRE(table.ok());
  CHECK(summary(ours(gcr::toml_to_json(*table))) == summary(expected));
}

TEST_CASE("swarm-resource: NVIDIA's comma list is our list; a name we refuse is named") {
  CHECK(imported("swarm-resource = \" DOCKER_RESOURCE_GPU , ,GPUS \"\n")
            .config.requests.swarm_resource ==
        std::vector<std::string>{"DOCKER_RESOURCE_GPU", "GPUS"});
  for (const char* empty : {"\"\"", "\"  ,  \""}) {
    CAPTURE(empty);
    const auto r = imported(std::string("swarm-resource = ") + empty + "\n");
    CHECK(r.config.requests.swarm_resource.empty());
    CHECK(r.toml.find("swarm-resource") == std::string::npos);
  }
  CHECK(config_error("swarm-resource = \"NVIDIA_DRIVER_CAPABILITIES\"\n") ==
        "nvidia.toml: swarm-resource `NVIDIA_DRIVER_CAPABILITIES` is one of the runtime's own "
        "variables");
}

TEST_CASE("cuda-compat-mode: NVIDIA's ways of loading the image's compat libcuda are ours") {
  const std::string key = "[nvidia-container-runtime.modes.legacy]\ncuda-compat-mode = ";
  for (const char* on : {"\"ldconfig\"", "\"hook\"", "\"mount\""}) {
    CAPTURE(on);
    CHECK(imported(key + on + "\n").config.requests.cuda_compat_dir == "/usr/local/cuda/compat");
  }
  const auto off = imported(key + "\"disabled\"\n");
  CHECK(off.config.requests.cuda_compat_dir.empty());
  CHECK(off.toml.find("cuda-compat-dir = \"\"  # "
                      "nvidia-container-runtime.modes.legacy.cuda-compat-mode\n") !=
        std::string::npos);
  CHECK(config_error(key + "\"always\"\n") ==
        "nvidia.toml: nvidia-container-runtime.modes.legacy.cuda-compat-mode must be ldconfig, "
        "hook, mount or disabled");
}

TEST_CASE("values that cannot be carried over") {
  CHECK(config_error("[nvidia-container-runtime]\nlog-level = \"info\"\nruntimes = \"runc\"\n") ==
        "nvidia.toml: nvidia-container-runtime.runtimes must be a list of strings");
  CHECK(config_error("supported-driver-capabilities = \"compute,teleport\"\n") ==
        "nvidia.toml: supported-driver-capabilities names an unknown capability `teleport`");
  CHECK(config_error("[nvidia-container-cli]\nroot = \"run/nvidia\"\n") ==
        "nvidia.toml: nvidia-container-cli.root must be an absolute path");
  CHECK(config_error("disable-require = false\n[nvidia-container-cli\nroot = 1\n")
            .find("at line 2") != std::string::npos);
  const auto r = imported(
      "supported-driver-capabilities = \"all\"\n[nvidia-container-cli]\n"
      "ldconfig = \"/sbin/ldconfig\"\n");
  CHECK(r.config.requests.supported_capabilities.size() == 7);
  CHECK(r.config.hooks.ldconfig == "@/sbin/ldconfig");
  CHECK(r.not_carried.at(0).find("never run") != std::string::npos);
}

// A quoted key of NVIDIA's file is no table of it, and whatever it holds, the file written says
// what the import reported and nothing else.
TEST_CASE("quoted keys: a dot is no table, a newline cannot leave the comment they are named in") {
  const auto r = imported(
      "\"nvidia-container-cli.root\" = \"/x\"\n"
      "\"a\\nb\" = 1\n"
      "\"x\\n[hooks]\\nctk-path = \\\"/tmp/p\\\"\\n#\" = 1\n"
      "[nvidia-container-cli]\nroot = \"/a\"\n");
  CHECK(r.config.driver.root == "/a");
  CHECK(r.config.hooks.ctk_path == gcr::Config{}.hooks.ctk_path);
  CHECK(
      r.not_carried ==
      std::vector<std::string>{
          R"("a\u000Ab": not a key of NVIDIA's configuration)",
          R"("nvidia-container-cli.root": not a key of NVIDIA's configuration)",
          R"("x\u000A[hooks]\u000Actk-path = \"/tmp/p\"\u000A#": not a key of NVIDIA's configuration)"});
  auto written = gcr::parse_toml(r.toml, "written");
  REQUIRE_MESSAGE(written.ok(), r.toml);
  CHECK(summary(ours(gcr::toml_to_json(*written))) == summary(r.config));
  CHECK(gcr::toml_to_json(*written) == Json{{"driver", {{"dev-root", "/a"}, {"root", "/a"}}}});
  // The source's name goes into a comment too.
  auto odd = gcr::import_nvidia_config("disable-require = true\n", "odd\n[hooks]\n.toml");
  REQUIRE(odd.ok());
  auto odd_written = gcr::parse_toml(odd->toml, "written");
  REQUIRE_MESSAGE(odd_written.ok(), odd->toml);
  CHECK(gcr::toml_to_json(*odd_written) == Json{{"requests", {{"disable-require", true}}}});
}

TEST_CASE("nvidia-ctk config --set values typed as NVIDIA's --set types them") {
  auto text = gcr::nvidia_settings_toml(
      {"nvidia-container-cli.no-cgroups", "nvidia-container-runtime.runtimes=crun, runc",
       "accept-nvidia-visible-devices-as-volume-mounts=1", "nvidia-container-runtime.mode=cdi",
       "nvidia-container-runtime.mode=legacy"});
  REQUIRE(text.ok());
  CHECK(*text ==
        "nvidia-container-cli.no-cgroups = true\n"
        "nvidia-container-runtime.runtimes = [\"crun\", \"runc\"]\n"
        "accept-nvidia-visible-devices-as-volume-mounts = true\n"
        "nvidia-container-runtime.mode = \"legacy\"\n");
  auto imported = gcr::import_nvidia_config(*text, "--set");
  REQUIRE(imported.ok());
  CHECK(imported->keys["runtime"]["runtimes"] == gcr::Json{"crun", "runc"});
  CHECK(imported->keys["requests"]["accept-volume-mounts"] == true);
  CHECK(imported->not_carried.size() == 1);
  CHECK(gcr::nvidia_settings_toml({"a b=1"}).error().message == "--set `a b=1`: not a key name");
  CHECK_FALSE(gcr::nvidia_settings_toml({".x"}).ok());
}
