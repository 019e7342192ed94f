#include "doctor/runtime_checks.h"

#include <cstdlib>

#include "base/fs.h"
#include "base/text.h"
#include "base/trust.h"
#include "config/config_file.h"
#include "doctor/host_programs.h"
#include "hooks/container_hooks.h"
#include "oci/runtime_lookup.h"

namespace gcr {
namespace {

constexpr const char* kArea = "runtime";

std::string first_line(const std::string& text) {
  return std::string(trim(std::string_view(text).substr(0, text.find('\n'))));
}

std::optional<std::string> check_low_level_runtime(const Config& config, Findings& findings) {
  const char* path_env = std::getenv("PATH");
  auto runtime =
      find_low_level_runtime(config.runtime.runtimes, path_env != nullptr ? path_env : "");
  if (!runtime) {
    findings.fail(kArea, "no low-level runtime: " + runtime.error().message, "[runtime] runtimes",
                  "apt install runc (or name its path in [runtime] runtimes)");
    return std::nullopt;
  }
  auto version = program_version(*runtime);
  if (!version) {
    findings.fail(kArea, "the low-level runtime does not run `--version`", *runtime,
                  "reinstall it, or name another in [runtime] runtimes");
    return std::nullopt;
  }
  findings.ok(kArea, "low-level runtime " + first_line(*version), *runtime);
  return *runtime;
}

// [hooks] ldconfig: what the loader-cache hook would run (ldconfig.real beside a wrapper
// script, as on Ubuntu), checked as the hook checks it.
void check_ldconfig(const Config& config, Findings& findings) {
  const std::string fix = "ldconfig = \"@/sbin/ldconfig\" in [hooks] (a static host program)";
  auto ldconfig = check_ldcache_request({}, config.hooks.ldconfig);
  if (!ldconfig) {
    findings.fail(kArea, ldconfig.error().message + ": the loader-cache hook refuses it",
                  config.hooks.ldconfig.substr(1), fix);
    return;
  }
  findings.ok(kArea, "ldconfig is a static host program", *ldconfig);
}

void check_ctk_path(const Config& config, Findings& findings) {
  const std::string& ctk = config.hooks.ctk_path;
  if (auto trusted = TrustCheck().program(ctk); !trusted) {
    findings.fail(kArea, "the hooks' gpu-ctk is not usable: " + trusted.error().message, ctk,
                  "ctk-path = \"/usr/bin/gpu-ctk\" in [hooks]");
    return;
  }
  findings.ok(kArea, "the hooks' gpu-ctk is there", ctk);
}

}  // namespace

Config check_config(const std::optional<std::string>& path, Findings& findings) {
  auto config = load_config(path);
  if (!config) {
    findings.fail(kArea, "the configuration does not load: " + config.error().message,
                  path.value_or(std::string(kDefaultConfigDir) + "/config.toml"),
                  "gpu-ctk config check FILE shows each problem; gpu-ctk config default > FILE "
                  "starts over");
    return Config{};
  }
  findings.ok(kArea, "configuration loads",
              config->source.empty() ? std::string("built-in defaults") : config->source);
  return *config;
}

std::optional<std::string> check_runtime(const Config& config, Findings& findings) {
  auto runtime = check_low_level_runtime(config, findings);
  check_ldconfig(config, findings);
  check_ctk_path(config, findings);
  return runtime;
}

}  // namespace gcr
