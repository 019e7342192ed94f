// The runtime configuration: keys, defaults and validation (PRODUCT.md "Configuration").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "json/strict_json.h"
#include "log/log.h"

namespace gcr {

struct Config {
  struct Runtime {
    std::vector<std::string> runtimes{"runc", "crun"};
    std::string log_file;
    LogLevel log_level = LogLevel::kInfo;
    std::string state_dir = "/run/gpu-container-runtime";  // small caches (the CUDA version)
  } runtime;
  struct Driver {
    std::string root = "/";
    std::string dev_root = "/";
  } driver;
  struct Requests {
    bool accept_env_when_unprivileged = true;
    bool accept_volume_mounts = false;
    std::vector<std::string> annotation_prefixes{"cdi.k8s.io/"};
    std::vector<std::string> supported_capabilities{"compute", "compat32", "display", "graphics",
                                                    "ngx",     "utility",  "video"};
    bool disable_require = false;
    std::string mode =
        "auto";  // "auto": unqualified IDs from the live driver; "cdi": <default-kind>=<id>
  } requests;
  struct Cdi {
    std::vector<std::string> spec_dirs{"/etc/cdi", "/var/run/cdi"};
    std::string default_kind = "nvidia.com/gpu";
  } cdi;
  struct Hooks {
    std::string ctk_path = "/usr/bin/gpu-ctk";
    std::string ldconfig = "@/sbin/ldconfig";
  } hooks;

  std::string source;  // the file it was read from; "" for built-in defaults
};

// Builds a Config from a document with the config file's shape ({"runtime": {...}, ...}).
// Unknown tables or keys, wrong types and invalid values are errors naming the key.
[[nodiscard]] Result<Config> config_from_json(const Json& doc);

// The default configuration file shipped in etc/config.toml, byte for byte.
[[nodiscard]] const std::string& default_config_toml();

}  // namespace gcr
