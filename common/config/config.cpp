#include "config/config.h"

#include <algorithm>
#include <functional>
#include <initializer_list>
#include <set>
#include <string_view>

#include "base/text.h"
#include "vocabulary/capabilities.h"
#include "vocabulary/cdi_name.h"
#include "vocabulary/request_names.h"

namespace gcr {
namespace {

enum class Type { kString, kBool, kStringList, kInteger, kIntegerList, kIntegerTable };

struct Key {
  const char* table;
  const char* name;
  Type type;
  std::function<Status(Config&, const Json&)> set;
};

const char* type_phrase(Type type) {
  switch (type) {
    case Type::kString:
      return "a string";
    case Type::kBool:
      return "true or false";
    case Type::kStringList:
      return "a list of strings";
    case Type::kInteger:
      return "an integer";
    case Type::kIntegerList:
      return "a list of integers";
    case Type::kIntegerTable:
      return "a table of integers";
  }
  return "";
}

bool has_type(const Json& v, Type type) {
  switch (type) {
    case Type::kString:
      return v.is_string();
    case Type::kBool:
      return v.is_boolean();
    case Type::kStringList:
      return v.is_array() &&
             std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_string(); });
    case Type::kInteger:
      return v.is_number_integer();
    case Type::kIntegerList:
      return v.is_array() &&
             std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_number_integer(); });
    case Type::kIntegerTable:
      return v.is_object() &&
             std::all_of(v.begin(), v.end(), [](const Json& e) { return e.is_number_integer(); });
  }
  return false;
}

Status require_absolute(const std::string& value) {
  if (value.empty() || value.front() != '/') return Error{"must be an absolute path"};
  return {};
}

Status require_absolute_each(const std::vector<std::string>& values) {
  for (const auto& v : values) {
    if (auto s = require_absolute(v); !s) return Error{"`" + v + "` " + s.error().message};
  }
  return {};
}

template <class T>
std::function<Status(Config&, const Json&)> assign(T Config::*group, std::string T::*field,
                                                   Status (*check)(const std::string&) = nullptr) {
  return [group, field, check](Config& c, const Json& v) -> Status {
    const auto& s = v.get_ref<const std::string&>();
    if (check != nullptr) {
      if (auto st = check(s); !st) return st;
    }
    (c.*group).*field = s;
    return {};
  };
}

template <class T>
std::function<Status(Config&, const Json&)> assign(T Config::*group, bool T::*field) {
  return [group, field](Config& c, const Json& v) -> Status {
    (c.*group).*field = v.get<bool>();
    return {};
  };
}

template <class T>
std::function<Status(Config&, const Json&)> assign(
    T Config::*group, std::vector<std::string> T::*field,
    Status (*check)(const std::vector<std::string>&) = nullptr) {
  return [group, field, check](Config& c, const Json& v) -> Status {
    auto list = v.get<std::vector<std::string>>();
    if (check != nullptr) {
      if (auto st = check(list); !st) return st;
    }
    (c.*group).*field = std::move(list);
    return {};
  };
}

// One of `allowed` (a list of names separated by " | ").
Status check_choice(const std::string& value, std::initializer_list<const char*> allowed) {
  std::string phrase;
  for (const char* a : allowed) {
    if (value == a) return {};
    phrase += (phrase.empty() ? "" : ", ") + std::string(a);
  }
  return Error{"must be one of " + phrase};
}

Status check_device_ids(const std::string& v) {
  return check_choice(v, {"uuid", "index"});
}
Status check_mig_strategy(const std::string& v) {
  return check_choice(v, {"none", "single", "mixed"});
}
Status check_sharing(const std::string& v) {
  return check_choice(v, {"none", "time-slicing", "mps"});
}

// MPS: one control daemon per container size, from 1 share to all of a GPU's.
constexpr std::int64_t kMaxMpsShares = 48;

bool mps_share_count(std::int64_t n) {
  return n >= 2 && n <= kMaxMpsShares;
}

// What one key cannot say alone: MPS shares a whole GPU among its replicas.
Status check_sharing_fits(const Config& c) {
  if (!c.mps()) return {};
  const auto& by_gpu = c.device_plugin.replicas_by_gpu;
  if (!mps_share_count(c.device_plugin.replicas) ||
      !std::all_of(by_gpu.begin(), by_gpu.end(),
                   [](const auto& g) { return mps_share_count(g.second); }))
    return Error{
        "`device-plugin.sharing` mps needs `device-plugin.replicas` (and each of "
        "`device-plugin.replicas-by-gpu`) from 2 to " +
        std::to_string(kMaxMpsShares) +
        " (the shares of each GPU; each container size has a control daemon)"};
  if (c.device_plugin.mig_strategy != "none")
    return Error{
        "`device-plugin.sharing` mps is not supported on MIG devices: set "
        "`device-plugin.mig-strategy` to none"};
  return {};
}

Status check_imex_channel(const std::string& v) {
  return check_choice(v, {"disabled", "auto", "enabled"});
}
Status check_allocation(const std::string& v) {
  return check_choice(v, {"topology", "packed", "distributed"});
}

Status check_device_list(const std::vector<std::string>& strategies) {
  if (strategies.empty()) return Error{"must name at least one strategy"};
  for (std::size_t i = 0; i < strategies.size(); ++i) {
    if (auto s =
            check_choice(strategies[i], {"envvar", "volume-mounts", "cdi-annotations", "cdi-cri"});
        !s)
      return Error{"`" + strategies[i] + "` " + s.error().message};
    if (std::find(strategies.begin(), strategies.begin() + static_cast<std::ptrdiff_t>(i),
                  strategies[i]) != strategies.begin() + static_cast<std::ptrdiff_t>(i))
      return Error{"names `" + strategies[i] + "` twice"};
  }
  return {};
}

Status check_resource_name(const std::string& name) {
  if (!is_extended_resource_name(name))
    return Error{"must be an extended resource name such as nvidia.com/gpu"};
  return {};
}

Status check_replica_count(std::int64_t n) {
  if (n < 1 || n > 1024) return Error{"must be from 1 to 1024"};
  return {};
}

Status check_replicas(Config& c, const Json& v) {
  const auto n = v.get<std::int64_t>();
  if (auto s = check_replica_count(n); !s) return s;
  c.device_plugin.replicas = n;
  return {};
}

// {"NVIDIA A100-SXM4-40GB" = 8, "0" = 2}: a GPU model or index, and its count.
Status check_replicas_by_gpu(Config& c, const Json& v) {
  std::map<std::string, std::int64_t> counts;
  for (const auto& [gpu, count] : v.items()) {
    if (gpu.empty() || gpu.size() > 256) return Error{"must name GPUs by model or index"};
    if (auto s = check_replica_count(count.get<std::int64_t>()); !s)
      return Error{"`" + gpu + "` " + s.error().message};
    counts[gpu] = count.get<std::int64_t>();
  }
  c.device_plugin.replicas_by_gpu = std::move(counts);
  return {};
}

// "" (off) or an absolute path naming a file, not a directory.
Status check_labels_file(const std::string& value) {
  if (value.empty()) return {};
  if (auto s = require_absolute(value); !s) return s;
  const std::string name = value.substr(value.rfind('/') + 1);
  if (name.empty() || name == "." || name == "..")
    return Error{"must name a file, not a directory"};
  return {};
}

Status check_ignored_xids(Config& c, const Json& v) {
  std::vector<std::int64_t> xids;
  for (const auto& e : v) {
    const auto xid = e.get<std::int64_t>();
    if (xid < 1 || xid > 1000000) return Error{"must hold Xid numbers (1 and up)"};
    xids.push_back(xid);
  }
  c.device_plugin.ignored_xids = std::move(xids);
  return {};
}

Status check_runtimes(const std::vector<std::string>& runtimes) {
  if (runtimes.empty()) return Error{"must name at least one runtime"};
  for (const auto& r : runtimes) {
    if (r.empty()) return Error{"must not contain an empty name"};
    if (r.find('/') != std::string::npos && r.front() != '/')
      return Error{"`" + r + "` must be a name searched in PATH or an absolute path"};
  }
  return {};
}

Status check_log_level(Config& c, const Json& v) {
  const auto level = parse_log_level(v.get<std::string>());
  if (!level) return Error{"must be one of error, warning, info, debug"};
  c.runtime.log_level = *level;
  return {};
}

Status check_log_file(const std::string& value) {
  return value.empty() ? Status{} : require_absolute(value);
}

Status check_prefixes(const std::vector<std::string>& prefixes) {
  if (std::any_of(prefixes.begin(), prefixes.end(), [](const auto& p) { return p.empty(); })) {
    return Error{"must not contain an empty prefix"};
  }
  return {};
}

Status check_capabilities(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (!capability_from_name(name)) return Error{"`" + name + "` is not a driver capability"};
  }
  return {};
}

Status check_kind(const std::string& kind) {
  if (!is_valid_kind(kind)) return Error{"must be a CDI kind such as nvidia.com/gpu"};
  return {};
}

Status check_mode(const std::string& mode) {
  if (mode != "auto" && mode != "cdi") return Error{"must be auto or cdi"};
  return {};
}

// "" (off) or a path in the image: absolute, without "." or ".." parts.
Status check_cuda_compat_dir(const std::string& value) {
  if (value.empty()) return {};
  if (auto s = require_absolute(value); !s) return s;
  for (auto part : split(std::string_view(value).substr(1), '/')) {
    if (part == "." || part == "..") return Error{"must not have `.` or `..` parts"};
  }
  return {};
}

Status check_ldconfig(const std::string& value) {
  if (value.size() < 2 || value[0] != '@' || value[1] != '/') {
    return Error{
        "must be '@' followed by an absolute host path; binaries from the container are "
        "never run"};
  }
  return {};
}

const std::vector<Key>& keys() {
  using C = Config;
  static const std::vector<Key> table = {
      {"runtime", "runtimes", Type::kStringList,
       assign(&C::runtime, &C::Runtime::runtimes, check_runtimes)},
      {"runtime", "log-file", Type::kString,
       assign(&C::runtime, &C::Runtime::log_file, check_log_file)},
      {"runtime", "log-level", Type::kString, check_log_level},
      {"runtime", "state-dir", Type::kString,
       assign(&C::runtime, &C::Runtime::state_dir, require_absolute)},
      {"driver", "root", Type::kString, assign(&C::driver, &C::Driver::root, require_absolute)},
      {"driver", "dev-root", Type::kString,
       assign(&C::driver, &C::Driver::dev_root, require_absolute)},
      {"requests", "accept-env-when-unprivileged", Type::kBool,
       assign(&C::requests, &C::Requests::accept_env_when_unprivileged)},
      {"requests", "accept-volume-mounts", Type::kBool,
       assign(&C::requests, &C::Requests::accept_volume_mounts)},
      {"requests", "annotation-prefixes", Type::kStringList,
       assign(&C::requests, &C::Requests::annotation_prefixes, check_prefixes)},
      {"requests", "supported-capabilities", Type::kStringList,
       assign(&C::requests, &C::Requests::supported_capabilities, check_capabilities)},
      {"requests", "disable-require", Type::kBool,
       assign(&C::requests, &C::Requests::disable_require)},
      {"requests", "mode", Type::kString, assign(&C::requests, &C::Requests::mode, check_mode)},
      {"requests", "cuda-compat-dir", Type::kString,
       assign(&C::requests, &C::Requests::cuda_compat_dir, check_cuda_compat_dir)},
      {"requests", "swarm-resource", Type::kStringList,
       assign(&C::requests, &C::Requests::swarm_resource, check_swarm_resource)},
      {"cdi", "spec-dirs", Type::kStringList,
       assign(&C::cdi, &C::Cdi::spec_dirs, require_absolute_each)},
      {"cdi", "default-kind", Type::kString, assign(&C::cdi, &C::Cdi::default_kind, check_kind)},
      {"hooks", "ctk-path", Type::kString,
       assign(&C::hooks, &C::Hooks::ctk_path, require_absolute)},
      {"hooks", "ldconfig", Type::kString, assign(&C::hooks, &C::Hooks::ldconfig, check_ldconfig)},
      {"device-plugin", "kubelet-dir", Type::kString,
       assign(&C::device_plugin, &C::DevicePlugin::kubelet_dir, require_absolute)},
      {"device-plugin", "resource-name", Type::kString,
       assign(&C::device_plugin, &C::DevicePlugin::resource_name, check_resource_name)},
      {"device-plugin", "device-ids", Type::kString,
       assign(&C::device_plugin, &C::DevicePlugin::device_ids, check_device_ids)},
      {"device-plugin", "device-list", Type::kStringList,
       assign(&C::device_plugin, &C::DevicePlugin::device_list, check_device_list)},
      {"device-plugin", "replicas", Type::kInteger, check_replicas},
      {"device-plugin", "replicas-by-gpu", Type::kIntegerTable, check_replicas_by_gpu},
      {"device-plugin", "replicas-on-distinct-gpus", Type::kBool,
       assign(&C::device_plugin, &C::DevicePlugin::replicas_on_distinct_gpus)},
      {"device-plugin", "sharing", Type::kString,
       assign(&C::device_plugin, &C::DevicePlugin::sharing, check_sharing)},
      {"device-plugin", "mps-root", Type::kString,
       assign(&C::device_plugin, &C::DevicePlugin::mps_root, require_absolute)},
      {"device-plugin", "labels-file", Type::kString,
       assign(&C::device_plugin, &C::DevicePlugin::labels_file, check_labels_file)},
      {"device-plugin", "mig-strategy", Type::kString,
       assign(&C::device_plugin, &C::DevicePlugin::mig_strategy, check_mig_strategy)},
      {"device-plugin", "allocation", Type::kString,
       assign(&C::device_plugin, &C::DevicePlugin::allocation, check_allocation)},
      {"device-plugin", "health", Type::kBool, assign(&C::device_plugin, &C::DevicePlugin::health)},
      {"device-plugin", "ignored-xids", Type::kIntegerList, check_ignored_xids},
      {"device-plugin", "imex-channel", Type::kString,
       assign(&C::device_plugin, &C::DevicePlugin::imex_channel, check_imex_channel)},
  };
  return table;
}

const Key* find_key(const std::string& table, const std::string& name) {
  for (const auto& key : keys()) {
    if (table == key.table && name == key.name) return &key;
  }
  return nullptr;
}

bool is_table(const std::string& name) {
  return std::any_of(keys().begin(), keys().end(), [&](const Key& k) { return name == k.table; });
}

Status apply_table(Config& config, const std::string& table, const Json& values) {
  if (!values.is_object()) return Error{"`" + table + "` must be a table"};
  for (const auto& [name, value] : values.items()) {
    const std::string dotted = table + "." + name;
    const Key* key = find_key(table, name);
    if (key == nullptr) return Error{"unknown key `" + dotted + "`"};
    if (!has_type(value, key->type)) {
      return Error{"`" + dotted + "` must be " + type_phrase(key->type)};
    }
    if (auto s = key->set(config, value); !s) return Error{"`" + dotted + "` " + s.error().message};
  }
  return {};
}

bool is_dns_label(std::string_view label) {
  if (label.empty() || label.size() > 63) return false;
  const auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  return alnum(label.front()) && alnum(label.back()) &&
         std::all_of(label.begin(), label.end(), [&](char c) { return alnum(c) || c == '-'; });
}

}  // namespace

Status check_swarm_resource(const std::vector<std::string>& names) {
  std::set<std::string> seen;
  for (const auto& name : names) {
    const bool plain = !name.empty() && name.size() <= 256 &&
                       std::all_of(name.begin(), name.end(),
                                   [](char c) { return c > 0x20 && c < 0x7f && c != '='; });
    if (!plain) return Error{"`" + printable(name, 64) + "` is not an environment variable name"};
    if (name.starts_with("NVIDIA_") && name != kVisibleDevicesVar)
      return Error{"`" + name + "` is one of the runtime's own variables"};
    if (!seen.insert(name).second) return Error{"names `" + name + "` twice"};
  }
  return {};
}

bool is_extended_resource_name(const std::string& name) {
  const auto slash = name.find('/');
  if (slash == std::string::npos || slash == 0 || slash > 253) return false;
  const std::string_view domain = std::string_view(name).substr(0, slash);
  const std::string_view resource = std::string_view(name).substr(slash + 1);
  std::size_t start = 0;
  while (true) {
    const auto dot = domain.find('.', start);
    if (!is_dns_label(domain.substr(start, dot == std::string_view::npos ? dot : dot - start)))
      return false;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (domain == "kubernetes.io" || domain.ends_with(".kubernetes.io")) return false;
  const auto ok = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  return !resource.empty() && resource.size() <= 63 && ok(resource.front()) &&
         ok(resource.back()) && std::all_of(resource.begin(), resource.end(), [&](char c) {
           return ok(c) || c == '-' || c == '_' || c == '.';
         });
}

Result<Config> config_from_json(const Json& doc) {
  if (!doc.is_object()) return Error{"the document must be a table of tables"};
  Config config;
  for (const auto& [table, values] : doc.items()) {
    if (!is_table(table)) return Error{"unknown table `" + table + "`"};
    if (auto s = apply_table(config, table, values); !s) return s.error();
  }
  if (auto s = check_sharing_fits(config); !s) return s.error();
  return config;
}

std::int64_t Config::DevicePlugin::replicas_for(unsigned index, const std::string& model) const {
  for (const std::string& key : {std::to_string(index), model}) {
    const auto it = replicas_by_gpu.find(key);
    if (it != replicas_by_gpu.end()) return it->second;
  }
  return replicas;
}

bool Config::DevicePlugin::shares_gpus() const {
  return replicas > 1 || std::any_of(replicas_by_gpu.begin(), replicas_by_gpu.end(),
                                     [](const auto& g) { return g.second > 1; });
}

bool Config::DevicePlugin::hands_out_cdi_names() const {
  return std::any_of(device_list.begin(), device_list.end(),
                     [](const std::string& strategy) { return strategy.starts_with("cdi-"); });
}

std::string plugin_socket_name(const std::string& resource_name) {
  std::string name = resource_name;
  std::replace(name.begin(), name.end(), '/', '-');
  return "gpu-device-plugin-" + name + ".sock";
}

std::string plugin_cdi_annotation_key(const std::string& resource_name) {
  std::string name = resource_name;
  std::replace(name.begin(), name.end(), '/', '_');
  return "cdi.k8s.io/gpu-device-plugin_" + name;
}

}  // namespace gcr
