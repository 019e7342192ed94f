#include "edits/apply.h"

#include <algorithm>
#include <unordered_map>

#include "base/child_process.h"
#include "base/text.h"

namespace gcr {
namespace {

// The object at parent[key], created when absent.
Json& object_member(Json& parent, const char* key) {
  Json& member = object_slot(parent, key);
  if (member.is_null()) member = Json::object();
  return member;
}

Json& array_member(Json& parent, const char* key) {
  Json& member = object_slot(parent, key);
  if (member.is_null()) member = Json::array();
  return member;
}

std::string env_name(const std::string& entry) {
  return entry.substr(0, entry.find('='));
}

// Every entry of the name takes the edit's value: runc gives a process the last of several,
// so replacing only the first would leave the spec's own value in force.
void apply_env(Json& spec, const std::vector<std::string>& env) {
  Json& list = array_member(object_member(spec, "process"), "env");
  for (const auto& entry : env) {
    const std::string name = env_name(entry);
    bool replaced = false;
    for (Json& e : list) {
      if (e.is_string() && env_name(e.get<std::string>()) == name) {
        e = entry;
        replaced = true;
      }
    }
    if (!replaced) list.push_back(entry);
  }
}

// Block and char nodes always carry both numbers (Go's zero values, as the reference): an
// absent minor would reach runc as -1, a wildcard that allows every minor of the major.
DeviceNode with_numbers(DeviceNode node) {
  if (node.type == "b" || node.type == "c") {
    node.major = node.major.value_or(0);
    node.minor = node.minor.value_or(0);
  }
  return node;
}

// A device node completed from the host, per CDI: the host node fills what the edit omits.
Result<DeviceNode> complete_from_host(DeviceNode node, const NodeStatFn& stat) {
  const std::string host = node.host_path.empty() ? node.path : node.host_path;
  const bool minimal = !node.type.empty() && (node.major.value_or(0) != 0 || node.type == "p");
  // Discovery's nodes carry all the host would give: not looked at again.
  if (minimal && node.file_mode) return with_numbers(node);
  auto st = stat(host);
  if (!st) {
    if (minimal) return with_numbers(node);
    return Error{"cannot stat host device: " + st.error().message};
  }
  if (!node.file_mode) node.file_mode = st->permissions & 0777;
  if (minimal) return with_numbers(node);
  if (st->type == '\0') return Error{"not a device node (" + host + ")"};
  const std::string host_type(1, st->type);
  if (node.type.empty()) node.type = host_type;
  if (node.type != host_type) {
    return Error{"host type mismatch: `" + node.type + "` wanted, host node is `" + host_type +
                 "` (" + host + ")"};
  }
  if (node.type == "p") {
    node.major.reset();
    node.minor.reset();
  } else if (node.major.value_or(0) == 0) {
    node.major = st->major;
    node.minor = st->minor;
  }
  return with_numbers(node);
}

std::optional<std::uint32_t> process_id(const Json& spec, const char* field) {
  const auto process = spec.find("process");
  if (process == spec.end()) return std::nullopt;
  const auto user = process->find("user");
  if (user == process->end()) return std::nullopt;
  const auto id = user->find(field);
  if (id == user->end() || !id->is_number_integer()) return std::nullopt;
  const auto v =
      id->is_number_unsigned()
          ? id->get<std::uint64_t>()
          : static_cast<std::uint64_t>(std::max<std::int64_t>(0, id->get<std::int64_t>()));
  return v > 0 && v <= UINT32_MAX ? std::optional<std::uint32_t>(static_cast<std::uint32_t>(v))
                                  : std::nullopt;
}

Json oci_device(const DeviceNode& node, const Json& spec) {
  Json d = Json::object();
  d["path"] = node.path;
  d["type"] = node.type;
  if (node.major) d["major"] = *node.major;
  if (node.minor) d["minor"] = *node.minor;
  if (node.file_mode) d["fileMode"] = *node.file_mode;
  const auto uid = node.uid ? node.uid : process_id(spec, "uid");
  const auto gid = node.gid ? node.gid : process_id(spec, "gid");
  if (uid) d["uid"] = *uid;
  if (gid) d["gid"] = *gid;
  return d;
}

void add_cgroup_rule(Json& spec, const DeviceNode& node) {
  if (node.type != "c" && node.type != "b") return;
  Json rule = Json::object();
  rule["allow"] = true;
  rule["type"] = node.type;
  if (node.major) rule["major"] = *node.major;
  if (node.minor) rule["minor"] = *node.minor;
  rule["access"] = node.permissions.empty()     ? "rwm"
                   : node.permissions == "none" ? ""
                                                : node.permissions;
  Json& rules = array_member(object_member(object_member(spec, "linux"), "resources"), "devices");
  // An identical rule is already there when the shim runs twice on one bundle.
  if (std::find(rules.begin(), rules.end(), rule) == rules.end()) rules.push_back(rule);
}

Status apply_device_nodes(Json& spec, const std::vector<DeviceNode>& nodes,
                          const NodeStatFn& stat) {
  for (const auto& edit : nodes) {
    auto node = complete_from_host(edit, stat);
    if (!node) return node.error().wrap("device " + edit.path);
    Json& devices = array_member(object_member(spec, "linux"), "devices");
    devices.erase(std::remove_if(devices.begin(), devices.end(),
                                 [&](const Json& d) { return d.value("path", "") == node->path; }),
                  devices.end());
    devices.push_back(oci_device(*node, spec));
    add_cgroup_rule(spec, *node);
  }
  return {};
}

void apply_net_devices(Json& spec, const std::vector<NetDevice>& devices) {
  if (devices.empty()) return;
  Json& map = object_member(object_member(spec, "linux"), "netDevices");
  for (const auto& d : devices) map[d.host_interface_name] = Json{{"name", d.name}};
}

std::size_t depth_of(const Json& mount) {
  const auto destination = mount.find("destination");
  if (destination == mount.end() || !destination->is_string()) return 0;
  const std::string cleaned = clean_path(destination->get_ref<const std::string&>());
  return static_cast<std::size_t>(std::count(cleaned.begin(), cleaned.end(), '/'));
}

// Stable sort by the number of components of the destination, each depth computed once.
void sort_by_depth(Json& list) {
  std::vector<std::pair<std::size_t, Json>> decorated;
  decorated.reserve(list.size());
  for (auto& m : list) decorated.emplace_back(depth_of(m), std::move(m));
  std::stable_sort(decorated.begin(), decorated.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  Json sorted = Json::array();
  for (auto& [depth, m] : decorated) sorted.push_back(std::move(m));
  list = std::move(sorted);
}

Json oci_mount(const Mount& m) {
  Json entry = Json::object();
  entry["destination"] = m.container_path;
  if (!m.type.empty()) entry["type"] = m.type;
  entry["source"] = m.host_path;
  if (!m.options.empty()) entry["options"] = m.options;
  return entry;
}

// The spec's own mounts win: a volume the user put at /usr/bin/nvidia-smi stays. Running the
// shim twice finds its own mounts there, identical, and adds nothing.
void apply_mounts(Json& spec, const std::vector<Mount>& mounts, std::vector<std::string>& kept) {
  if (mounts.empty()) return;
  Json& list = array_member(spec, "mounts");
  // Each destination's first mount in the list, as the edits are added.
  std::unordered_map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto destination = list[i].is_object() ? list[i].find("destination") : list[i].end();
    if (destination != list[i].end() && destination->is_string())
      first.emplace(destination->get<std::string>(), i);
  }
  for (const auto& m : mounts) {
    Json entry = oci_mount(m);
    const auto [at, fresh] = first.emplace(m.container_path, list.size());
    if (fresh) {
      list.push_back(std::move(entry));
    } else if (list[at->second] != entry) {
      kept.push_back(m.container_path);
    }
  }
  sort_by_depth(list);
}

// A hook the spec already runs with the same program, arguments, environment and timeout (an
// engine that applied the same CDI device before us: containerd 2.x with its CDI annotations)
// is not added again; the one there gets our explicit environment.
void apply_hooks(Json& spec, const std::vector<Hook>& hooks) {
  for (const auto& h : hooks) {
    Json& list = array_member(object_member(spec, "hooks"), h.hook_name.c_str());
    Json entry = hook_entry(h);
    const auto same = std::find_if(list.begin(), list.end(), [&](const Json& e) {
      if (!e.is_object() || e.value("path", Json()) != entry["path"] ||
          e.value("args", Json::array()) != entry.value("args", Json::array()) ||
          e.value("timeout", Json()) != entry.value("timeout", Json()))
        return false;
      const Json env = e.value("env", Json::array());
      return env.is_array() &&
             std::all_of(env.begin(), env.end(), [](const Json& v) { return v.is_string(); }) &&
             hook_environment(env.get<std::vector<std::string>>()) == entry["env"];
    });
    if (same == list.end())
      list.push_back(std::move(entry));
    else
      (*same)["env"] = entry["env"];
  }
}

void apply_additional_gids(Json& spec, const std::vector<std::uint32_t>& gids) {
  for (const auto gid : gids) {
    if (gid == 0) continue;
    Json& list =
        array_member(object_member(object_member(spec, "process"), "user"), "additionalGids");
    if (std::find(list.begin(), list.end(), Json(gid)) == list.end()) list.push_back(gid);
  }
}

}  // namespace

Json hook_entry(const Hook& hook) {
  Json entry = Json::object();
  entry["path"] = hook.path;
  if (!hook.args.empty()) entry["args"] = hook.args;
  entry["env"] = hook_environment(hook.env);
  if (hook.timeout) entry["timeout"] = *hook.timeout;
  return entry;
}

Status apply_edits(Json& spec, const ContainerEdits& edits, const NodeStatFn& stat,
                   std::vector<std::string>& kept) {
  if (!edits.env.empty()) apply_env(spec, edits.env);
  if (auto s = apply_device_nodes(spec, edits.device_nodes, stat); !s) return s;
  apply_net_devices(spec, edits.net_devices);
  apply_mounts(spec, edits.mounts, kept);
  apply_hooks(spec, edits.hooks);
  if (edits.intel_rdt) object_member(spec, "linux")["intelRdt"] = *edits.intel_rdt;
  apply_additional_gids(spec, edits.additional_gids);
  return {};
}

}  // namespace gcr
