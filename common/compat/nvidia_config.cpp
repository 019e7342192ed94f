#include "compat/nvidia_config.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>

#include "base/text.h"
#include "toml/toml.h"
#include "vocabulary/capabilities.h"

namespace gcr {
namespace {

// A name as it goes into the written file's comments: as it is when it holds no control
// character (a comment ends at a newline), else quoted and escaped.
std::string comment_text(const std::string& name) {
  const bool plain = std::none_of(name.begin(), name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  return plain ? name : toml_string(name);
}

// One part of a dotted key: as it is when TOML would read it bare, else quoted and escaped. So
// `"nvidia-container-cli.root" = ...` is no `[nvidia-container-cli] root`, and a key holding a
// newline cannot end a comment line of the written file.
std::string key_part(const std::string& key) {
  const bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  return bare ? key : toml_string(key);
}

// Our key being built: its value and the NVIDIA key it came from.
struct Carried {
  Json value;
  std::string from;
};

class Importer {
 public:
  explicit Importer(const std::string& source) : source_(source) {}

  // Sets our [table] key from NVIDIA's `from`.
  void set(const std::string& table, const std::string& key, Json value, const std::string& from) {
    auto& keys = tables_[table];
    if (keys.count(key) == 0) order_[table].push_back(key);
    keys[key] = Carried{std::move(value), from};
  }
  void not_carried(const std::string& key, const std::string& why) {
    not_carried_.push_back(key + ": " + why);
  }
  Error error(const std::string& key, const std::string& why) const {
    return Error{source_ + ": " + key + " " + why};
  }

  [[nodiscard]] Json ours() const {
    Json doc = Json::object();
    for (const auto& table : kTables) {
      const auto keys = tables_.find(table);
      if (keys == tables_.end()) continue;
      for (const auto& key : order_.at(table)) doc[table][key] = keys->second.at(key).value;
    }
    return doc;
  }

  [[nodiscard]] std::string toml() const {
    std::string out =
        "# gpu-container-runtime configuration imported by `gpu-ctk config import` from\n# " +
        comment_text(source_) +
        ". Keys not set here keep their defaults (gpu-ctk config default).\n";
    for (const auto& table : kTables) {
      const auto keys = tables_.find(table);
      if (keys == tables_.end()) continue;
      out += "\n[" + std::string(table) + "]\n";
      for (const auto& key : order_.at(table)) {
        const auto& c = keys->second.at(key);
        out += key + " = " + toml_value_text(c.value) + "  # " + c.from + "\n";
      }
    }
    if (!not_carried_.empty()) {
      out += "\n# Not carried over (no equivalent here):\n";
      for (const auto& line : not_carried_) out += "#   " + line + "\n";
    }
    return out;
  }

  [[nodiscard]] const std::vector<std::string>& not_carried_lines() const { return not_carried_; }

 private:
  static constexpr std::array<const char*, 5> kTables = {"runtime", "driver", "requests", "cdi",
                                                         "hooks"};

  std::string source_;
  std::map<std::string, std::map<std::string, Carried>> tables_;
  std::map<std::string, std::vector<std::string>> order_;
  std::vector<std::string> not_carried_;
};

using Handler = std::function<Status(Importer&, const std::string& key, const Json& value)>;

Handler to_bool(const char* table, const char* ours) {
  return [=](Importer& in, const std::string& key, const Json& v) -> Status {
    if (!v.is_boolean()) return in.error(key, "must be true or false");
    in.set(table, ours, v, key);
    return {};
  };
}

Handler to_string_list(const char* table, const char* ours) {
  return [=](Importer& in, const std::string& key, const Json& v) -> Status {
    const bool ok = v.is_array() &&
                    std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_string(); });
    if (!ok) return in.error(key, "must be a list of strings");
    in.set(table, ours, v, key);
    return {};
  };
}

Handler to_string(const char* table, const char* ours) {
  return [=](Importer& in, const std::string& key, const Json& v) -> Status {
    if (!v.is_string()) return in.error(key, "must be a string");
    in.set(table, ours, v, key);
    return {};
  };
}

Handler nothing(const char* why) {
  return [=](Importer& in, const std::string& key, const Json& v) -> Status {
    in.not_carried(key + " = " + (v.is_string() ? toml_string(v.get<std::string>()) : v.dump()),
                   why);
    return {};
  };
}

Status capabilities(Importer& in, const std::string& key, const Json& v) {
  if (!v.is_string()) return in.error(key, "must be a string");
  CapabilitySet set;
  for (auto item : split(v.get_ref<const std::string&>(), ',')) {
    const std::string name(trim(item));
    if (name.empty()) continue;
    if (name == "all") {
      set = CapabilitySet::all();
      continue;
    }
    const auto cap = capability_from_name(name);
    if (!cap) return in.error(key, "names an unknown capability `" + name + "`");
    set.add(*cap);
  }
  in.set("requests", "supported-capabilities", set.names(), key);
  return {};
}

// NVIDIA's comma-separated variable names are our list.
Status swarm_resource(Importer& in, const std::string& key, const Json& v) {
  if (!v.is_string()) return in.error(key, "must be a string");
  std::vector<std::string> names;
  for (auto item : split(v.get_ref<const std::string&>(), ',')) {
    const std::string name(trim(item));
    if (!name.empty()) names.push_back(name);
  }
  if (auto s = check_swarm_resource(names); !s) return in.error(key, s.error().message);
  if (!names.empty()) in.set("requests", "swarm-resource", names, key);
  return {};
}

Status driver_root(Importer& in, const std::string& key, const Json& v) {
  if (!v.is_string()) return in.error(key, "must be a string");
  const auto root = v.get<std::string>();
  if (root.empty()) return {};
  if (root.front() != '/') return in.error(key, "must be an absolute path");
  in.set("driver", "root", root, key);
  in.set("driver", "dev-root", root, key);
  return {};
}

Status ldconfig(Importer& in, const std::string& key, const Json& v) {
  if (!v.is_string()) return in.error(key, "must be a string");
  const auto path = v.get<std::string>();
  if (path.size() > 1 && path[0] == '@' && path[1] == '/') {
    in.set("hooks", "ldconfig", path, key);
  } else {
    in.not_carried(key + " = " + toml_string(path),
                   "a program from the container's image is never run; the host's ldconfig is");
  }
  return {};
}

Status runtime_log(Importer& in, const std::string& key, const Json& v) {
  if (!v.is_string()) return in.error(key, "must be a string");
  const auto path = v.get<std::string>();
  if (path.empty() || path == "/dev/null") return {};
  if (path.front() != '/') return in.error(key, "must be an absolute path");
  in.set("runtime", "log-file", path, key);
  return {};
}

Status log_level(Importer& in, const std::string& key, const Json& v) {
  if (!v.is_string()) return in.error(key, "must be a string");
  static const std::map<std::string, std::string> levels = {
      {"trace", "debug"},     {"debug", "debug"}, {"info", "info"},   {"warn", "warning"},
      {"warning", "warning"}, {"error", "error"}, {"fatal", "error"}, {"panic", "error"}};
  const auto it = levels.find(to_lower(v.get<std::string>()));
  if (it == levels.end()) return in.error(key, "is not a log level");
  in.set("runtime", "log-level", it->second, key);
  return {};
}

// NVIDIA's ways of loading an image's CUDA forward-compatibility libraries (ldconfig, hook,
// mount) are ours: the compat folder first in the loader cache; disabled turns that off.
Status cuda_compat_mode(Importer& in, const std::string& key, const Json& v) {
  if (!v.is_string()) return in.error(key, "must be a string");
  const auto m = v.get<std::string>();
  if (m != "ldconfig" && m != "hook" && m != "mount" && m != "disabled")
    return in.error(key, "must be ldconfig, hook, mount or disabled");
  in.set("requests", "cuda-compat-dir", m == "disabled" ? "" : Config::Requests{}.cuda_compat_dir,
         key);
  return {};
}

Status mode(Importer& in, const std::string& key, const Json& v) {
  if (!v.is_string()) return in.error(key, "must be a string");
  const auto m = v.get<std::string>();
  if (m == "cdi") {
    in.set("requests", "mode", "cdi", key);
  } else if (m == "auto" || m == "legacy" || m == "jit-cdi") {
    in.set("requests", "mode", "auto", key);
  } else {
    in.not_carried(key + " = " + toml_string(m), "only auto and cdi exist here; auto applies");
  }
  return {};
}

const std::map<std::string, Handler>& handlers() {
  static const std::map<std::string, Handler> table = {
      {"disable-require", to_bool("requests", "disable-require")},
      {"accept-nvidia-visible-devices-envvar-when-unprivileged",
       to_bool("requests", "accept-env-when-unprivileged")},
      {"accept-nvidia-visible-devices-as-volume-mounts",
       to_bool("requests", "accept-volume-mounts")},
      {"supported-driver-capabilities", capabilities},
      {"swarm-resource", swarm_resource},
      {"nvidia-container-cli.root", driver_root},
      {"nvidia-container-cli.ldconfig", ldconfig},
      {"nvidia-container-cli.path", nothing("nvidia-container-cli is not run")},
      {"nvidia-container-cli.environment", nothing("nvidia-container-cli is not run")},
      {"nvidia-container-cli.debug",
       nothing("libnvidia-container's log; [runtime] log-file is the runtime's")},
      {"nvidia-container-cli.ldcache", nothing("the driver root's /etc/ld.so.cache is read")},
      {"nvidia-container-cli.load-kmods", nothing("kernel modules are never loaded")},
      {"nvidia-container-cli.no-cgroups",
       nothing("device cgroup rules are written to the spec; the low-level runtime applies them")},
      {"nvidia-container-cli.no-pivot", nothing("nvidia-container-cli is not run")},
      {"nvidia-container-cli.user", nothing("nvidia-container-cli is not run")},
      {"nvidia-container-runtime.debug", runtime_log},
      {"nvidia-container-runtime.log-level", log_level},
      {"nvidia-container-runtime.runtimes", to_string_list("runtime", "runtimes")},
      {"nvidia-container-runtime.mode", mode},
      {"nvidia-container-runtime.modes.cdi.spec-dirs", to_string_list("cdi", "spec-dirs")},
      {"nvidia-container-runtime.modes.cdi.default-kind", to_string("cdi", "default-kind")},
      {"nvidia-container-runtime.modes.cdi.annotation-prefixes",
       to_string_list("requests", "annotation-prefixes")},
      {"nvidia-container-runtime.modes.csv.mount-spec-path",
       nothing("CSV (Tegra) mode is not supported")},
      {"nvidia-container-runtime.modes.csv.compat-container-root",
       nothing("CSV (Tegra) mode is not supported")},
      {"nvidia-container-runtime.modes.legacy.cuda-compat-mode", cuda_compat_mode},
      {"nvidia-container-runtime-hook.path",
       nothing("the runtime injects the GPUs itself; no prestart hook is run")},
      {"nvidia-container-runtime-hook.skip-mode-detection",
       nothing("the runtime injects the GPUs itself; no prestart hook is run")},
      {"nvidia-ctk.path", nothing("the hooks run gpu-ctk ([hooks] ctk-path)")},
  };
  return table;
}

// Every leaf of `node` with its dotted key, tables first-to-last as written.
void leaves(const Json& node, const std::string& prefix,
            std::vector<std::pair<std::string, const Json*>>& out) {
  for (const auto& [key, value] : node.items()) {
    const std::string dotted = prefix.empty() ? key_part(key) : prefix + "." + key_part(key);
    if (value.is_object()) {
      leaves(value, dotted, out);
    } else {
      out.emplace_back(dotted, &value);
    }
  }
}

}  // namespace

Result<ImportedConfig> import_nvidia_config(const std::string& text, const std::string& source) {
  auto table = parse_toml(text, source);
  if (!table) return table.error();
  const Json doc = toml_to_json(*table);
  std::vector<std::pair<std::string, const Json*>> found;
  leaves(doc, "", found);
  Importer in(source);
  for (const auto& [key, value] : found) {
    const auto handler = handlers().find(key);
    if (handler != handlers().end()) {
      if (auto s = handler->second(in, key, *value); !s) return s.error();
    } else if (key.rfind("features.", 0) == 0) {
      in.not_carried(key, "NVIDIA's feature flags do not apply");
    } else if (key.rfind("nvidia-container-runtime.modes.jit-cdi.", 0) == 0) {
      in.not_carried(key, "the runtime's own discovery has no options");
    } else {
      in.not_carried(key, "not a key of NVIDIA's configuration");
    }
  }
  auto config = config_from_json(in.ours());
  if (!config) return config.error().wrap("the imported configuration is invalid");
  return ImportedConfig{std::move(*config), in.toml(), in.not_carried_lines(), in.ours()};
}

Result<std::string> nvidia_settings_toml(const std::vector<std::string>& settings) {
  static const std::set<std::string> kListKeys = {
      "nvidia-container-runtime.runtimes", "nvidia-container-runtime.modes.cdi.spec-dirs",
      "nvidia-container-runtime.modes.cdi.annotation-prefixes"};
  std::vector<std::string> order;
  std::map<std::string, Json> values;
  for (const auto& setting : settings) {
    const auto eq = setting.find('=');
    const std::string key = setting.substr(0, eq);
    const bool dotted_name =
        !key.empty() && key.front() != '.' && key.back() != '.' &&
        key.find("..") == std::string::npos &&
        key.find_first_not_of(
            "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") ==
            std::string::npos;
    if (!dotted_name) return Error{"--set " + quote(setting, 64) + ": not a key name"};
    const std::string text = eq == std::string::npos ? "true" : setting.substr(eq + 1);
    Json value = text;
    if (kListKeys.count(key) != 0) {
      value = Json::array();
      for (auto item : split(text, ',')) {
        if (!trim(item).empty()) value.push_back(std::string(trim(item)));
      }
    } else if (text == "true" || text == "True" || text == "TRUE" || text == "t" || text == "T" ||
               text == "1") {
      value = true;
    } else if (text == "false" || text == "False" || text == "FALSE" || text == "f" ||
               text == "F" || text == "0") {
      value = false;
    }
    if (values.count(key) == 0) order.push_back(key);
    values[key] = std::move(value);
  }
  std::string out;
  for (const auto& key : order) out += key + " = " + toml_value_text(values[key]) + "\n";
  return out;
}

}  // namespace gcr
