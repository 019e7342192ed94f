// NVIDIA's device plugin's flags and variables, met by ours: refused or named, with our key.
#include <doctest/doctest.h>

#include <map>

#include "deviceplugin/nvidia_plugin_options.h"

TEST_CASE("NVIDIA's plugin's flags are refused with the key of ours to set") {
  CHECK(gcr::nvidia_plugin_flag_refusal("--mig-strategy=mixed") ==
        "--mig-strategy is NVIDIA's plugin's flag, not read here: set [device-plugin] "
        "mig-strategy");
  CHECK(gcr::nvidia_plugin_flag_refusal("--device-list-strategy") ==
        "--device-list-strategy is NVIDIA's plugin's flag, not read here: set [device-plugin] "
        "device-list");
  CHECK(gcr::nvidia_plugin_flag_refusal("--pass-device-specs=true")
            ->find("nothing: the runtime writes the device rules") != std::string::npos);
  CHECK(gcr::nvidia_plugin_flag_refusal("--imex-channel-ids=0") ==
        "--imex-channel-ids is NVIDIA's plugin's flag, not read here: set [device-plugin] "
        "imex-channel (\"auto\" for [0])");
  for (const char* other : {"--config", "--mig", "mig-strategy", "-mig-strategy", "--x=y", ""}) {
    CAPTURE(other);
    CHECK_FALSE(gcr::nvidia_plugin_flag_refusal(other).has_value());
  }
}

TEST_CASE("NVIDIA's plugin's variables set are each named once, empty ones not at all") {
  const std::map<std::string, std::string> env = {{"MIG_STRATEGY", "mixed"},
                                                  {"DEVICE_ID_STRATEGY", ""},
                                                  {"DP_DISABLE_HEALTHCHECKS", "xids"},
                                                  {"IMEX_REQUIRED", "true"},
                                                  {"NVIDIA_VISIBLE_DEVICES", "all"}};
  const auto lines = gcr::nvidia_plugin_env_warnings(
      [&](const std::string& name) -> std::optional<std::string> {
        const auto it = env.find(name);
        return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
      },
      "/etc/gpu-container-runtime/config.toml");
  REQUIRE(lines.size() == 3);
  CHECK(lines[0] ==
        "MIG_STRATEGY=mixed is NVIDIA's plugin's variable, not read here: set [device-plugin] "
        "mig-strategy in /etc/gpu-container-runtime/config.toml");
  CHECK(lines[1] ==
        "IMEX_REQUIRED=true is NVIDIA's plugin's variable, not read here: set [device-plugin] "
        "imex-channel (\"enabled\" for a required channel) in "
        "/etc/gpu-container-runtime/config.toml");
  CHECK(lines[2] ==
        "DP_DISABLE_HEALTHCHECKS=xids is NVIDIA's plugin's variable, not read here: set "
        "[device-plugin] health (true or false) in /etc/gpu-container-runtime/config.toml");
}
