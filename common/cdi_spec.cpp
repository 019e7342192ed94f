#include "cdi_spec.h"

#include <algorithm>
#include <initializer_list>
#include <set>

#include "cdi_name.h"
#include "text.h"

namespace gcr {
namespace {

using Keys = std::initializer_list<const char*>;

// Known versions, oldest first; 0.3.0 is the oldest a spec may declare.
const std::vector<std::string> kVersions = {"0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0",
                                            "0.6.0", "0.7.0", "0.8.0", "1.0.0", "1.1.0"};
constexpr std::size_t kOldestUsable = 2;  // index of 0.3.0

Error field_error(const std::string& where, const std::string& what) {
  return Error{"`" + where + "` " + what};
}

Status only_keys(const Json& obj, Keys known, const std::string& where) {
  if (!obj.is_object()) return field_error(where, "must be an object");
  for (const auto& [key, value] : obj.items()) {
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; })) {
      return Error{"unknown field `" + (where.empty() ? key : where + "." + key) + "`"};
    }
  }
  return {};
}

const Json* member(const Json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

std::string at(const std::string& where, const char* key) {
  return where.empty() ? key : where + "." + key;
}

Result<std::string> string_field(const Json& obj, const char* key, const std::string& where,
                                 bool required) {
  const Json* v = member(obj, key);
  if (v == nullptr)
    return required ? Result<std::string>(field_error(at(where, key), "is required"))
                    : std::string();
  if (!v->is_string()) return field_error(at(where, key), "must be a string");
  return v->get<std::string>();
}

Result<std::vector<std::string>> string_list(const Json& obj, const char* key,
                                             const std::string& where) {
  const Json* v = member(obj, key);
  if (v == nullptr) return std::vector<std::string>();
  if (!v->is_array() ||
      !std::all_of(v->begin(), v->end(), [](const Json& e) { return e.is_string(); })) {
    return field_error(at(where, key), "must be a list of strings");
  }
  return v->get<std::vector<std::string>>();
}

Result<std::map<std::string, std::string>> string_map(const Json& obj, const char* key,
                                                      const std::string& where) {
  const Json* v = member(obj, key);
  std::map<std::string, std::string> out;
  if (v == nullptr) return out;
  if (!v->is_object()) return field_error(at(where, key), "must be a map of strings");
  for (const auto& [k, value] : v->items()) {
    if (!value.is_string()) return field_error(at(where, key) + "." + k, "must be a string");
    out[k] = value.get<std::string>();
  }
  return out;
}

// An integer in [lo, hi].
Result<std::optional<std::int64_t>> int_field(const Json& obj, const char* key,
                                              const std::string& where, std::int64_t lo,
                                              std::int64_t hi) {
  const Json* v = member(obj, key);
  if (v == nullptr) return std::optional<std::int64_t>();
  const bool fits =
      v->is_number_unsigned()
          ? v->get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)
          : v->is_number_integer() && v->get<std::int64_t>() >= lo && v->get<std::int64_t>() <= hi;
  if (!fits)
    return field_error(at(where, key), "must be an integer from " + std::to_string(lo) + " to " +
                                           std::to_string(hi));
  return std::optional<std::int64_t>(v->get<std::int64_t>());
}

template <class T>
std::optional<T> narrow(const std::optional<std::int64_t>& v) {
  return v ? std::optional<T>(static_cast<T>(*v)) : std::nullopt;
}

// Collects the first error of a sequence of field reads.
class Reader {
 public:
  template <class T>
  T take(Result<T> r) {
    if (!r) {
      if (!error_) error_ = r.error();
      return T{};
    }
    return std::move(r).value();
  }
  void check(const Status& s) {
    if (!s && !error_) error_ = s.error();
  }
  [[nodiscard]] const std::optional<Error>& error() const { return error_; }

 private:
  std::optional<Error> error_;
};

Result<DeviceNode> device_node_from(const Json& j, const std::string& where) {
  Reader r;
  r.check(only_keys(
      j, {"path", "hostPath", "type", "major", "minor", "fileMode", "permissions", "uid", "gid"},
      where));
  if (r.error()) return *r.error();
  DeviceNode n;
  n.path = r.take(string_field(j, "path", where, true));
  n.host_path = r.take(string_field(j, "hostPath", where, false));
  n.type = r.take(string_field(j, "type", where, false));
  n.major = r.take(int_field(j, "major", where, 0, UINT32_MAX));
  n.minor = r.take(int_field(j, "minor", where, 0, UINT32_MAX));
  n.file_mode = narrow<std::uint32_t>(r.take(int_field(j, "fileMode", where, 0, UINT32_MAX)));
  n.permissions = r.take(string_field(j, "permissions", where, false));
  n.uid = narrow<std::uint32_t>(r.take(int_field(j, "uid", where, 0, UINT32_MAX)));
  n.gid = narrow<std::uint32_t>(r.take(int_field(j, "gid", where, 0, UINT32_MAX)));
  if (r.error()) return *r.error();
  return n;
}

Result<Mount> mount_from(const Json& j, const std::string& where) {
  Reader r;
  r.check(only_keys(j, {"hostPath", "containerPath", "type", "options"}, where));
  if (r.error()) return *r.error();
  Mount m;
  m.host_path = r.take(string_field(j, "hostPath", where, true));
  m.container_path = r.take(string_field(j, "containerPath", where, true));
  m.type = r.take(string_field(j, "type", where, false));
  m.options = r.take(string_list(j, "options", where));
  if (r.error()) return *r.error();
  return m;
}

Result<Hook> hook_from(const Json& j, const std::string& where) {
  Reader r;
  r.check(only_keys(j, {"hookName", "path", "args", "env", "timeout"}, where));
  if (r.error()) return *r.error();
  Hook h;
  h.hook_name = r.take(string_field(j, "hookName", where, true));
  h.path = r.take(string_field(j, "path", where, true));
  h.args = r.take(string_list(j, "args", where));
  h.env = r.take(string_list(j, "env", where));
  h.timeout = narrow<int>(r.take(int_field(j, "timeout", where, INT32_MIN, INT32_MAX)));
  if (r.error()) return *r.error();
  return h;
}

Result<NetDevice> net_device_from(const Json& j, const std::string& where) {
  Reader r;
  r.check(only_keys(j, {"hostInterfaceName", "name"}, where));
  if (r.error()) return *r.error();
  NetDevice d{r.take(string_field(j, "hostInterfaceName", where, true)),
              r.take(string_field(j, "name", where, true))};
  if (r.error()) return *r.error();
  return d;
}

Result<Json> intel_rdt_from(const Json& j, const std::string& where) {
  Reader r;
  r.check(only_keys(j, {"closID", "l3CacheSchema", "memBwSchema", "schemata", "enableMonitoring"},
                    where));
  if (r.error()) return *r.error();
  Json out = Json::object();
  for (const char* key : {"closID", "l3CacheSchema", "memBwSchema"}) {
    const auto v = r.take(string_field(j, key, where, false));
    if (!v.empty()) out[key] = v;
  }
  if (member(j, "schemata") != nullptr) out["schemata"] = r.take(string_list(j, "schemata", where));
  if (const Json* mon = member(j, "enableMonitoring")) {
    if (!mon->is_boolean())
      r.check(field_error(at(where, "enableMonitoring"), "must be true or false"));
    else
      out["enableMonitoring"] = mon->get<bool>();
  }
  if (r.error()) return *r.error();
  return out;
}

template <class T, class Fn>
Result<std::vector<T>> list_of(const Json& obj, const char* key, const std::string& where,
                               Fn parse) {
  std::vector<T> out;
  const Json* v = member(obj, key);
  if (v == nullptr) return out;
  if (!v->is_array()) return field_error(at(where, key), "must be a list");
  for (std::size_t i = 0; i < v->size(); ++i) {
    auto item = parse((*v)[i], at(where, key) + "[" + std::to_string(i) + "]");
    if (!item) return item.error();
    out.push_back(std::move(*item));
  }
  return out;
}

Result<std::vector<std::uint32_t>> gid_list(const Json& obj, const std::string& where) {
  std::vector<std::uint32_t> out;
  const Json* v = member(obj, "additionalGids");
  if (v == nullptr) return out;
  const auto ok = [](const Json& e) {
    return e.is_number_integer() && e.get<std::int64_t>() >= 0 &&
           e.get<std::int64_t>() <= UINT32_MAX;
  };
  if (!v->is_array() || !std::all_of(v->begin(), v->end(), ok))
    return field_error(at(where, "additionalGids"), "must be a list of group IDs");
  for (const auto& e : *v) out.push_back(static_cast<std::uint32_t>(e.get<std::int64_t>()));
  return out;
}

bool is_env_entry(const std::string& e) {
  return e.find('=') != std::string::npos && e.front() != '=';
}

bool is_clean_absolute(const std::string& path) {
  return !path.empty() && path.front() == '/' && clean_path(path) == path;
}

Status validate_node(const DeviceNode& n, const std::string& where) {
  if (!is_clean_absolute(n.path) || !path_is_under(n.path, "/dev") || n.path == "/dev") {
    return field_error(where + ".path",
                       "`" + printable(n.path) + "` must be a clean path under /dev");
  }
  if (!n.host_path.empty() && !is_clean_absolute(n.host_path)) {
    return field_error(where + ".hostPath",
                       "`" + printable(n.host_path) + "` must be a clean absolute path");
  }
  if (n.type != "" && n.type != "b" && n.type != "c" && n.type != "u" && n.type != "p") {
    return field_error(where + ".type", "`" + printable(n.type) + "` is not one of b, c, u, p");
  }
  const bool perms_ok = n.permissions == "none" ||
                        std::all_of(n.permissions.begin(), n.permissions.end(),
                                    [](char c) { return c == 'r' || c == 'w' || c == 'm'; });
  if (!perms_ok)
    return field_error(where + ".permissions",
                       "`" + printable(n.permissions) + "` must be made of r, w, m");
  return {};
}

Status validate_hook(const Hook& h, const std::string& where) {
  static const char* kinds[] = {"prestart",       "createRuntime", "createContainer",
                                "startContainer", "poststart",     "poststop"};
  if (std::none_of(std::begin(kinds), std::end(kinds),
                   [&](const char* k) { return h.hook_name == k; })) {
    return field_error(where + ".hookName", "`" + printable(h.hook_name) + "` is not a hook name");
  }
  if (!is_clean_absolute(h.path))
    return field_error(where + ".path",
                       "`" + printable(h.path) + "` must be a clean absolute path");
  for (const auto& e : h.env) {
    if (!is_env_entry(e))
      return field_error(where + ".env", "entry `" + printable(e) + "` is not NAME=value");
  }
  if (h.timeout && *h.timeout <= 0) return field_error(where + ".timeout", "must be positive");
  return {};
}

Status validate_intel_rdt(const Json& rdt, const std::string& where) {
  const auto clos = rdt.value("closID", "");
  if (!clos.empty() && clos != "/" &&
      (clos.size() >= 4096 || clos == "." || clos == ".." ||
       clos.find_first_of("/\n") != std::string::npos)) {
    return field_error(where + ".intelRdt.closID", "`" + printable(clos) + "` is not a valid name");
  }
  return {};
}

Status validate_net_devices(const std::vector<NetDevice>& devices, const std::string& where) {
  std::set<std::string> hosts, names;
  for (const auto& d : devices) {
    if (d.host_interface_name.empty() || d.name.empty())
      return field_error(where + ".netDevices", "entries need both names");
    if (!hosts.insert(d.host_interface_name).second || !names.insert(d.name).second) {
      return field_error(where + ".netDevices", "names must be unique");
    }
  }
  return {};
}

std::size_t version_index(std::string version) {
  if (!version.empty() && version.front() == 'v') version.erase(0, 1);
  const auto it = std::find(kVersions.begin(), kVersions.end(), version);
  return it == kVersions.end() ? kVersions.size()
                               : static_cast<std::size_t>(it - kVersions.begin());
}

std::size_t required_index(const ContainerEdits& e) {
  std::size_t need = kOldestUsable;
  const auto bump = [&](const char* v) { need = std::max(need, version_index(v)); };
  for (const auto& m : e.mounts) {
    if (!m.type.empty()) bump("0.4.0");
  }
  for (const auto& n : e.device_nodes) {
    if (!n.host_path.empty()) bump("0.5.0");
  }
  if (e.intel_rdt) bump("0.7.0");
  if (!e.additional_gids.empty()) bump("0.7.0");
  if (e.intel_rdt &&
      (e.intel_rdt->contains("schemata") || e.intel_rdt->value("enableMonitoring", false)))
    bump("1.1.0");
  if (!e.net_devices.empty()) bump("1.1.0");
  return need;
}

std::size_t required_index(const CdiSpec& spec) {
  std::size_t need = required_index(spec.edits);
  const auto bump = [&](const char* v) { need = std::max(need, version_index(v)); };
  if (!spec.annotations.empty()) bump("0.6.0");
  const auto slash = spec.kind.find('/');
  if (slash != std::string::npos && spec.kind.find('.', slash) != std::string::npos) bump("0.6.0");
  for (const auto& d : spec.devices) {
    need = std::max(need, required_index(d.edits));
    if (!d.name.empty() && d.name.front() >= '0' && d.name.front() <= '9') bump("0.5.0");
    if (!d.annotations.empty()) bump("0.6.0");
  }
  return need;
}

Result<CdiDevice> device_from(const Json& j, const std::string& where) {
  Reader r;
  r.check(only_keys(j, {"name", "annotations", "containerEdits"}, where));
  if (r.error()) return *r.error();
  CdiDevice d;
  d.name = r.take(string_field(j, "name", where, true));
  d.annotations = r.take(string_map(j, "annotations", where));
  const Json* edits = member(j, "containerEdits");
  if (edits == nullptr)
    r.check(field_error(at(where, "containerEdits"), "is required"));
  else
    d.edits = r.take(cdi_edits_from_json(*edits, at(where, "containerEdits")));
  if (r.error()) return *r.error();
  return d;
}

}  // namespace

Result<ContainerEdits> cdi_edits_from_json(const Json& doc, const std::string& where) {
  Reader r;
  r.check(only_keys(
      doc, {"env", "deviceNodes", "hooks", "mounts", "intelRdt", "additionalGids", "netDevices"},
      where));
  if (r.error()) return *r.error();
  ContainerEdits e;
  e.env = r.take(string_list(doc, "env", where));
  e.device_nodes = r.take(list_of<DeviceNode>(doc, "deviceNodes", where, device_node_from));
  e.hooks = r.take(list_of<Hook>(doc, "hooks", where, hook_from));
  e.mounts = r.take(list_of<Mount>(doc, "mounts", where, mount_from));
  if (const Json* rdt = member(doc, "intelRdt"))
    e.intel_rdt = r.take(intel_rdt_from(*rdt, at(where, "intelRdt")));
  e.additional_gids = r.take(gid_list(doc, where));
  e.net_devices = r.take(list_of<NetDevice>(doc, "netDevices", where, net_device_from));
  if (r.error()) return *r.error();
  return e;
}

Result<CdiSpec> cdi_spec_from_json(const Json& doc) {
  Reader r;
  r.check(only_keys(doc, {"cdiVersion", "kind", "annotations", "devices", "containerEdits"}, ""));
  if (r.error()) return *r.error();
  CdiSpec spec;
  spec.version = r.take(string_field(doc, "cdiVersion", "", true));
  spec.kind = r.take(string_field(doc, "kind", "", true));
  spec.annotations = r.take(string_map(doc, "annotations", ""));
  if (const Json* edits = member(doc, "containerEdits"))
    spec.edits = r.take(cdi_edits_from_json(*edits, "containerEdits"));
  spec.devices = r.take(list_of<CdiDevice>(doc, "devices", "", device_from));
  if (r.error()) return *r.error();
  return spec;
}

Status validate_cdi_edits(const ContainerEdits& e, const std::string& where) {
  for (const auto& env : e.env) {
    if (!is_env_entry(env))
      return field_error(where + ".env", "entry `" + printable(env) + "` is not NAME=value");
  }
  for (std::size_t i = 0; i < e.device_nodes.size(); ++i) {
    if (auto s =
            validate_node(e.device_nodes[i], where + ".deviceNodes[" + std::to_string(i) + "]");
        !s)
      return s;
  }
  for (std::size_t i = 0; i < e.hooks.size(); ++i) {
    if (auto s = validate_hook(e.hooks[i], where + ".hooks[" + std::to_string(i) + "]"); !s)
      return s;
  }
  for (std::size_t i = 0; i < e.mounts.size(); ++i) {
    const auto& m = e.mounts[i];
    const std::string w = where + ".mounts[" + std::to_string(i) + "]";
    if (m.host_path.empty()) return field_error(w + ".hostPath", "must not be empty");
    if (!is_clean_absolute(m.container_path)) {
      return field_error(w + ".containerPath",
                         "`" + printable(m.container_path) + "` must be a clean absolute path");
    }
  }
  if (e.intel_rdt) {
    if (auto s = validate_intel_rdt(*e.intel_rdt, where); !s) return s;
  }
  return validate_net_devices(e.net_devices, where);
}

Status validate_cdi_spec(const CdiSpec& spec) {
  const std::size_t declared = version_index(spec.version);
  if (declared == kVersions.size())
    return Error{"invalid version `" + printable(spec.version) + "`"};
  const std::size_t needed = required_index(spec);
  if (declared < needed) return Error{"the spec version must be at least v" + kVersions[needed]};
  const auto slash = spec.kind.find('/');
  if (slash == std::string::npos || !is_valid_vendor(spec.kind.substr(0, slash))) {
    return Error{"invalid vendor in kind `" + printable(spec.kind) + "`"};
  }
  if (!is_valid_class(spec.kind.substr(slash + 1)))
    return Error{"invalid class in kind `" + printable(spec.kind) + "`"};
  if (spec.devices.empty()) return Error{"invalid spec, no devices"};
  if (auto s = validate_cdi_edits(spec.edits, "containerEdits"); !s) return s;
  std::set<std::string> names;
  for (const auto& d : spec.devices) {
    if (!is_valid_device_name(d.name))
      return Error{"invalid device name `" + printable(d.name) + "`"};
    if (!names.insert(d.name).second) return Error{"duplicate device name `" + d.name + "`"};
    if (d.edits.empty()) return Error{"invalid device `" + d.name + "`, empty device edits"};
    if (auto s = validate_cdi_edits(d.edits, "devices[" + d.name + "].containerEdits"); !s)
      return s;
  }
  return {};
}

std::string minimum_cdi_version(const CdiSpec& spec) {
  return kVersions[required_index(spec)];
}

Json cdi_edits_to_json(const ContainerEdits& e) {
  Json out = Json::object();
  if (!e.env.empty()) out["env"] = e.env;
  if (!e.device_nodes.empty()) {
    Json nodes = Json::array();
    for (const auto& n : e.device_nodes) {
      Json j = {{"path", n.path}};
      if (!n.host_path.empty()) j["hostPath"] = n.host_path;
      if (!n.type.empty()) j["type"] = n.type;
      if (n.major) j["major"] = *n.major;
      if (n.minor) j["minor"] = *n.minor;
      if (n.file_mode) j["fileMode"] = *n.file_mode;
      if (!n.permissions.empty()) j["permissions"] = n.permissions;
      if (n.uid) j["uid"] = *n.uid;
      if (n.gid) j["gid"] = *n.gid;
      nodes.push_back(std::move(j));
    }
    out["deviceNodes"] = nodes;
  }
  if (!e.hooks.empty()) {
    Json hooks = Json::array();
    for (const auto& h : e.hooks) {
      Json j = {{"hookName", h.hook_name}, {"path", h.path}};
      if (!h.args.empty()) j["args"] = h.args;
      if (!h.env.empty()) j["env"] = h.env;
      if (h.timeout) j["timeout"] = *h.timeout;
      hooks.push_back(std::move(j));
    }
    out["hooks"] = hooks;
  }
  if (!e.mounts.empty()) {
    Json mounts = Json::array();
    for (const auto& m : e.mounts) {
      Json j = {{"hostPath", m.host_path}, {"containerPath", m.container_path}};
      if (!m.type.empty()) j["type"] = m.type;
      if (!m.options.empty()) j["options"] = m.options;
      mounts.push_back(std::move(j));
    }
    out["mounts"] = mounts;
  }
  if (e.intel_rdt) out["intelRdt"] = *e.intel_rdt;
  if (!e.additional_gids.empty()) out["additionalGids"] = e.additional_gids;
  if (!e.net_devices.empty()) {
    Json nets = Json::array();
    for (const auto& d : e.net_devices)
      nets.push_back({{"hostInterfaceName", d.host_interface_name}, {"name", d.name}});
    out["netDevices"] = nets;
  }
  return out;
}

Json cdi_spec_to_json(const CdiSpec& spec) {
  Json out = {{"cdiVersion", spec.version}, {"kind", spec.kind}};
  if (!spec.annotations.empty()) out["annotations"] = spec.annotations;
  Json devices = Json::array();
  for (const auto& d : spec.devices) {
    Json j = {{"name", d.name}};
    if (!d.annotations.empty()) j["annotations"] = d.annotations;
    j["containerEdits"] = cdi_edits_to_json(d.edits);
    devices.push_back(std::move(j));
  }
  out["devices"] = devices;
  if (!spec.edits.empty()) out["containerEdits"] = cdi_edits_to_json(spec.edits);
  return out;
}

}  // namespace gcr
