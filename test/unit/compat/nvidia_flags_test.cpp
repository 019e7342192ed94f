// nvidia-ctk's flag spellings turned into gpu-ctk's.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compat/nvidia_flags.h"

namespace {

using Args = std::vector<std::string>;

Args translated(const std::string& command, const Args& args, bool as_nvidia_ctk = true) {
  auto out = gcr::translate_nvidia_flags(command, args, as_nvidia_ctk);
  REQUIRE_MESSAGE(out.ok(), out.error().message);
  return *out;
}

std::string flags_error(const std::string& command, const Args& args) {
  auto out = gcr::translate_nvidia_flags(command, args, true);
  REQUIRE_FALSE(out.ok());
  return out.error().message;
}

}  // namespace

TEST_CASE("runtime configure: NVIDIA's names become ours, ours pass through") {
  CHECK(translated("runtime configure",
                   {"--runtime=containerd", "--nvidia-set-as-default", "--nvidia-runtime-name",
                    "gpu", "--cdi.enabled", "--config", "/etc/c.toml", "--dry-run"}) ==
        Args{"--runtime=containerd", "--set-as-default", "--runtime-name=gpu", "--cdi", "--config",
             "/etc/c.toml", "--stdout"});  // nvidia-ctk's --dry-run prints the file alone
  CHECK(translated("runtime configure", {"--dry-run"}, false) == Args{"--dry-run"});
  CHECK(translated("runtime configure", {"--enable-cdi=true", "--nvidia-set-as-default=false"}) ==
        Args{"--cdi"});
  CHECK(translated("runtime configure", {"-nvidia-runtime-path=/x", "-set-as-default"}) ==
        Args{"--runtime-path=/x", "--set-as-default"});
  CHECK(translated("runtime configure", {"-nvidia-runtime-path=/x"}, false) ==
        Args{"-nvidia-runtime-path=/x"});  // gpu-ctk's own parser reads single dashes
  CHECK(translated("runtime configure", {"--drop-in-config=/etc/c.d/99.toml"}) ==
        Args{"--drop-in=/etc/c.d/99.toml"});
}

TEST_CASE("switches spelled as ours take urfave/cli's =true and =false") {
  // Boost refused `--set-as-default=true` ("does not take any arguments"), which NVIDIA's
  // install steps write.
  CHECK(translated("runtime configure", {"--set-as-default=true", "--dry-run=false",
                                         "--cdi.enabled=1"}) == Args{"--set-as-default", "--cdi"});
  CHECK(translated("runtime configure", {"--set-as-default=false", "--dry-run=T"}) ==
        Args{"--stdout"});
  CHECK(translated("system create-dev-char-symlinks", {"--create-all=true", "--dry-run=false"}) ==
        Args{"--create-all"});
  CHECK(translated("cdi generate", {"--no-all-device=true"}) == Args{"--no-all-device"});
  CHECK(flags_error("runtime configure", {"--set-as-default=yes"}) ==
        "--set-as-default: `yes` is not true or false");
}

TEST_CASE("our behaviour already: accepted without effect; other values refused with why") {
  CHECK(translated("runtime configure", {"--config-source=file", "--config-mode", "config-file"})
            .empty());
  CHECK(flags_error("runtime configure", {"--config-source=command"}) ==
        "--config-source=command is not supported: gpu-ctk reads and writes the engine's files; "
        "name the file with --config");
  CHECK(flags_error("runtime configure", {"--config-mode=oci-hook"}).find("OCI hook files") !=
        std::string::npos);
  CHECK(translated("cdi generate", {"--device-id", "all"}).empty());
  CHECK(flags_error("cdi generate", {"--mode=csv"}).find("--mode=csv is not supported") == 0);
}

TEST_CASE("NVIDIA's generate modes that gpu-ctk has are ours; the others are refused with why") {
  CHECK(translated("cdi generate", {"--mode=nvml"}) == std::vector<std::string>{"--mode=nvml"});
  CHECK(translated("cdi generate", {"--discovery-mode", "management"}) ==
        std::vector<std::string>{"--mode=management"});
  CHECK(translated("cdi generate", {"--mode", "imex"}) == std::vector<std::string>{"--mode=imex"});
  CHECK(flags_error("cdi generate", {"--mode", "wsl"}) ==
        "--mode=wsl is not supported: gpu-ctk generates specs from the driver's files and NVML "
        "(auto, nvml), the management spec (management) and the IMEX channels' (imex)");
}

TEST_CASE("refused flags name themselves") {
  CHECK(flags_error("cdi generate", {"--library-search-path=/opt"})
            .find("--library-search-path is not supported: ") == 0);
  CHECK(flags_error("config", {"--config-file", "/etc/nvidia-container-runtime/config.toml"})
            .find("--config-file is not supported") == 0);
  CHECK(translated("config", {"--set", "nvidia-container-cli.no-cgroups", "--in-place"}) ==
        Args{"--nvidia-set=nvidia-container-cli.no-cgroups", "--in-place"});
  CHECK(flags_error("runtime configure", {"--nvidia-runtime-name"}) ==
        "--nvidia-runtime-name needs a value");
  CHECK(flags_error("runtime configure", {"--cdi.enabled=maybe"}) ==
        "--cdi.enabled: `maybe` is not true or false");
}

TEST_CASE("cdi generate and hooks: NVIDIA's names, and ldconfig as a host path") {
  CHECK(translated("cdi generate", {"--cdi-vendor=example.com", "--cdi-class", "gpu",
                                    "--nvidia-ctk-path=/usr/bin/nvidia-ctk",
                                    "--ldconfig-path=/sbin/ldconfig.real"}) ==
        Args{"--vendor=example.com", "--class=gpu", "--ctk-path=/usr/bin/nvidia-ctk",
             "--ldconfig-path=@/sbin/ldconfig.real"});
  // NVIDIA's name for the hook program (1.17+), which our nvidia-cdi-hook link answers.
  CHECK(translated("cdi generate", {"--nvidia-cdi-hook-path=/usr/bin/nvidia-cdi-hook"}) ==
        Args{"--ctk-path=/usr/bin/nvidia-cdi-hook"});
  CHECK(translated("hook update-ldcache",
                   {"--ldconfig-path", "/sbin/ldconfig", "--folder", "/usr/lib"}) ==
        Args{"--ldconfig-path=@/sbin/ldconfig", "--folder", "/usr/lib"});
  CHECK(translated("hook update-ldcache", {"--ldconfig-path=@/sbin/ldconfig"}) ==
        Args{"--ldconfig-path=@/sbin/ldconfig"});
  // Under gpu-ctk's name a path without '@' is the container's, which the hook refuses.
  CHECK(translated("hook update-ldcache", {"--ldconfig-path", "/sbin/ldconfig"}, false) ==
        Args{"--ldconfig-path=/sbin/ldconfig"});
}

TEST_CASE("system create-dev-char-symlinks: --driver-root is our --dev-root; loading is refused") {
  const std::string command = "system create-dev-char-symlinks";
  CHECK(translated(command, {"--driver-root=/run/nvidia/driver", "--create-all", "-dry-run",
                             "--dev-char-path", "/dev/char"}) ==
        Args{"--dev-root=/run/nvidia/driver", "--create-all", "--dry-run", "--dev-char-path",
             "/dev/char"});
  CHECK(flags_error(command, {"--create-all", "--load-kernel-modules"}) ==
        "--load-kernel-modules is not supported: gpu-ctk loads no kernel module: load them first "
        "(nvidia-modprobe -u -c=0); the packages' udev rule runs this command when they load");
  CHECK(flags_error(command, {"--create-device-nodes"})
            .find("--create-device-nodes is not supported: gpu-ctk makes no device node") == 0);
}

namespace {

// The flags cdi generate's environment `vars` gives beside the command line `args`.
gcr::Result<Args> from_env(const std::map<std::string, std::string>& vars, const Args& args = {}) {
  return gcr::nvidia_env_flags("cdi generate", args,
                               [&](const std::string& name) -> std::optional<std::string> {
                                 const auto it = vars.find(name);
                                 if (it == vars.end()) return std::nullopt;
                                 return it->second;
                               });
}

}  // namespace

TEST_CASE("cdi generate under nvidia-ctk: flags from NVIDIA_CTK_* where the line has none") {
  // nvidia-cdi-refresh.service's variable, and what an env file sets.
  auto out = from_env({{"NVIDIA_CTK_CDI_OUTPUT_FILE_PATH", "/var/run/cdi/nvidia.yaml"},
                       {"NVIDIA_CTK_DRIVER_ROOT", "/run/nvidia/driver"},
                       {"NVIDIA_CTK_CDI_GENERATE_DEVICE_NAME_STRATEGIES", "index, uuid"},
                       {"NVIDIA_CTK_CDI_GENERATE_VENDOR", "example.com"},
                       {"NVIDIA_CTK_CDI_GENERATE_NO_ALL_DEVICE", "true"},
                       {"NVIDIA_CTK_CDI_GENERATE_LDCONFIG_PATH", "/sbin/ldconfig.real"},
                       {"NVIDIA_CTK_CDI_HOOK_PATH", "/usr/bin/nvidia-cdi-hook"},
                       {"NVIDIA_CTK_CDI_GENERATE_DEVICE_IDS", "all"}});
  REQUIRE_MESSAGE(out.ok(), out.error().message);
  CHECK(*out == Args{"--output=/var/run/cdi/nvidia.yaml", "--driver-root=/run/nvidia/driver",
                     "--device-name-strategy=index", "--device-name-strategy=uuid",
                     "--no-all-device", "--ctk-path=/usr/bin/nvidia-cdi-hook",
                     "--ldconfig-path=@/sbin/ldconfig.real", "--vendor=example.com"});
  // The command line wins, under any of the flag's names; a switch set false adds nothing.
  out = from_env({{"NVIDIA_CTK_CDI_OUTPUT_FILE_PATH", "/var/run/cdi/nvidia.yaml"},
                  {"NVIDIA_CTK_CDI_GENERATE_VENDOR", "example.com"},
                  {"NVIDIA_CTK_CDI_GENERATE_MODE", "nvml"},
                  {"NVIDIA_CTK_CDI_GENERATE_NO_ALL_DEVICE", "false"}},
                 {"-o", "/etc/cdi/x.yaml", "-cdi-vendor=other.com", "--discovery-mode", "auto"});
  REQUIRE(out.ok());
  CHECK(out->empty());
  // Empty is unset, as urfave/cli reads it: the flag's default (--dev-root then --driver-root).
  out = from_env({{"NVIDIA_CTK_CDI_GENERATE_NO_ALL_DEVICE", ""},
                  {"NVIDIA_CTK_DEV_ROOT", ""},
                  {"NVIDIA_CTK_CDI_HOOK_PATH", ""}});
  REQUIRE(out.ok());
  CHECK(out->empty());
  // The management spec names no GPUs: their naming variables are not read for it.
  const std::map<std::string, std::string> naming = {
      {"NVIDIA_CTK_CDI_GENERATE_DEVICE_NAME_STRATEGIES", "uuid"},
      {"NVIDIA_CTK_CDI_GENERATE_NO_ALL_DEVICE", "true"}};
  for (const Args& mode : {Args{"--mode=management"}, Args{"-discovery-mode", "management"}}) {
    out = from_env(naming, mode);
    REQUIRE(out.ok());
    CHECK(out->empty());
  }
  auto with_mode = naming;
  with_mode["NVIDIA_CTK_CDI_GENERATE_MODE"] = "management";
  out = from_env(with_mode);
  REQUIRE(out.ok());
  CHECK(*out == Args{"--mode=management"});
  // NVIDIA's other names for --device-id, on the command line.
  CHECK(
      translated("cdi generate", {"--device-ids=all", "--devices", "all", "-device=all"}).empty());
  // Other commands read none.
  CHECK(gcr::nvidia_env_flags("runtime configure", {}, [](const std::string&) {
          return std::optional<std::string>("x");
        })->empty());
}

TEST_CASE("cdi generate under nvidia-ctk: a variable for a refused flag or value names itself") {
  auto out = from_env({{"NVIDIA_CTK_CDI_GENERATE_FEATURE_FLAGS", "a"}});
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().message ==
        "NVIDIA_CTK_CDI_GENERATE_FEATURE_FLAGS: --feature-flag is not supported: no feature flags");
  out = from_env({{"NVIDIA_CTK_CDI_GENERATE_DEVICE_IDS", "0,1"}});
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().message ==
        "NVIDIA_CTK_CDI_GENERATE_DEVICE_IDS: --device-id=0 is not "
        "supported: gpu-ctk puts every GPU in the spec");
  out = from_env({{"NVIDIA_CTK_CDI_GENERATE_NO_ALL_DEVICE", "yes"}});
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().message ==
        "NVIDIA_CTK_CDI_GENERATE_NO_ALL_DEVICE: --no-all-device: `yes` is not true or false");
  // A value the command would refuse later is refused here, naming the variable.
  out = from_env({{"NVIDIA_CTK_CDI_GENERATE_OUTPUT_FORMAT", "xml"}});
  REQUIRE_FALSE(out.ok());
  CHECK(out.error().message ==
        "NVIDIA_CTK_CDI_GENERATE_OUTPUT_FORMAT: --format=xml is not supported: a spec is json or "
        "yaml");
  out = from_env({{"NVIDIA_CTK_CDI_GENERATE_OUTPUT_FORMAT", "JSON"}});
  REQUIRE(out.ok());
  CHECK(*out == Args{"--format=json"});  // in any case, as NVIDIA's reads it
}

TEST_CASE("cdi generate under nvidia-ctk: --dev-root is --driver-root when only that is given") {
  CHECK(gcr::with_nvidia_defaults("cdi generate", {"--driver-root", "/run/nvidia/driver"}) ==
        Args{"--driver-root", "/run/nvidia/driver", "--dev-root=/run/nvidia/driver"});
  CHECK(gcr::with_nvidia_defaults("cdi generate", {"--driver-root=/a", "--dev-root=/"}) ==
        Args{"--driver-root=/a", "--dev-root=/"});
  CHECK(gcr::with_nvidia_defaults("cdi generate", {"--output=x.yaml"}) == Args{"--output=x.yaml"});
  CHECK(gcr::with_nvidia_defaults("system create-dev-char-symlinks", {"--driver-root=/a"}) ==
        Args{"--driver-root=/a"});
}

TEST_CASE(
    "nvidia-container-runtime-hook's flags before the stage, as Go's flag package reads them") {
  // What rootless-Docker and podman hooks.d wrappers pass; a usage error there failed every
  // container on the host.
  auto read = gcr::read_legacy_hook_flags(
      {"-config=/etc/nvidia-container-runtime/config.toml", "--debug", "prestart", "-x"});
  REQUIRE(read.ok());
  CHECK_FALSE(read->version);
  CHECK(read->rest == Args{"prestart", "-x"});
  read = gcr::read_legacy_hook_flags({"--config", "/x.toml", "-debug=false", "--", "-prestart"});
  REQUIRE(read.ok());
  CHECK(read->rest == Args{"-prestart"});
  read = gcr::read_legacy_hook_flags({"-version"});
  REQUIRE(read.ok());
  CHECK(read->version);
  CHECK(read->rest.empty());
  CHECK_FALSE(gcr::read_legacy_hook_flags({"-version=false", "prestart"})->version);
  CHECK(gcr::read_legacy_hook_flags({"-config"}).error().message == "-config needs a value");
  CHECK(gcr::read_legacy_hook_flags({"-bogus", "prestart"}).error().message ==
        "flag provided but not defined: -bogus");
  CHECK(gcr::read_legacy_hook_flags({"-debug=maybe"}).error().message ==
        "--debug: `maybe` is not true or false");
}
