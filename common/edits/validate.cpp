#include "edits/validate.h"

#include <algorithm>
#include <set>

#include "base/text.h"
#include "json/fields.h"

namespace gcr {
namespace {

bool is_env_entry(const std::string& e) {
  return e.find('=') != std::string::npos && e.front() != '=';
}

bool is_clean_absolute(const std::string& path) {
  return !path.empty() && path.front() == '/' && clean_path(path) == path;
}

Status validate_node(const DeviceNode& n, const std::string& where) {
  if (!is_clean_absolute(n.path) || !path_is_under(n.path, "/dev") || n.path == "/dev") {
    return field_error(where + ".path", quote(n.path) + " must be a clean path under /dev");
  }
  if (!n.host_path.empty() && !is_clean_absolute(n.host_path)) {
    return field_error(where + ".hostPath", quote(n.host_path) + " must be a clean absolute path");
  }
  if (n.type != "" && n.type != "b" && n.type != "c" && n.type != "u" && n.type != "p") {
    return field_error(where + ".type", quote(n.type) + " is not one of b, c, u, p");
  }
  const bool perms_ok = n.permissions == "none" ||
                        std::all_of(n.permissions.begin(), n.permissions.end(),
                                    [](char c) { return c == 'r' || c == 'w' || c == 'm'; });
  if (!perms_ok)
    return field_error(where + ".permissions", quote(n.permissions) + " must be made of r, w, m");
  return {};
}

Status validate_hook(const Hook& h, const std::string& where) {
  static const char* kinds[] = {"prestart",       "createRuntime", "createContainer",
                                "startContainer", "poststart",     "poststop"};
  if (std::none_of(std::begin(kinds), std::end(kinds),
                   [&](const char* k) { return h.hook_name == k; })) {
    return field_error(where + ".hookName", quote(h.hook_name) + " is not a hook name");
  }
  if (!is_clean_absolute(h.path))
    return field_error(where + ".path", quote(h.path) + " must be a clean absolute path");
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
    return field_error(where + ".intelRdt.closID", quote(clos) + " is not a valid name");
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

}  // namespace

Status validate_edits(const ContainerEdits& e, const std::string& where) {
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
                         quote(m.container_path) + " must be a clean absolute path");
    }
  }
  if (e.intel_rdt) {
    if (auto s = validate_intel_rdt(*e.intel_rdt, where); !s) return s;
  }
  return validate_net_devices(e.net_devices, where);
}

}  // namespace gcr
