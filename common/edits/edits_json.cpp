#include "edits/edits_json.h"

#include <algorithm>

#include "json/fields.h"

namespace gcr {
namespace {

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

}  // namespace

Result<ContainerEdits> edits_from_json(const Json& doc, const std::string& where) {
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

Json edits_to_json(const ContainerEdits& e) {
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

}  // namespace gcr
