#include "injection/runc_to_come.h"

#include <unistd.h>

#include <algorithm>

#include "json/fields.h"

namespace gcr {
namespace {

std::string in_bundle(const std::string& bundle, const std::string& path) {
  if (!path.empty() && path.front() == '/') return path;
  return (bundle.empty() ? "." : bundle) + "/" + path;
}

Result<MountToCome> mount_to_come(const Json& m, const std::string& bundle,
                                  const std::string& where) {
  if (!m.is_object()) return field_error(where, "is not an object");
  Reader r;
  MountToCome mount;
  mount.destination = r.take(string_field(m, "destination", where, true));
  mount.source = r.take(string_field(m, "source", where, false));
  const std::string type = r.take(string_field(m, "type", where, false));
  const auto options = r.take(string_list(m, "options", where));
  if (r.error()) return *r.error();
  mount.bind = type == "bind" ||
               std::find(options.begin(), options.end(), "bind") != options.end() ||
               std::find(options.begin(), options.end(), "rbind") != options.end();
  if (mount.bind) mount.source = in_bundle(bundle, mount.source);
  mount.fresh =
      !mount.bind && (type == "tmpfs" || type == "proc" || type == "sysfs" || type == "devpts" ||
                      type == "mqueue" || type == "cgroup" || type == "cgroup2");
  return mount;
}

Result<std::vector<MountToCome>> spec_mounts(const Json& spec, const std::string& bundle) {
  std::vector<MountToCome> mounts;
  const Json* list = member(spec, "mounts");
  if (list == nullptr) return mounts;
  if (!list->is_array()) return Error{"mounts is not an array"};
  for (std::size_t i = 0; i < list->size(); ++i) {
    auto mount = mount_to_come((*list)[i], bundle, "mounts[" + std::to_string(i) + "]");
    if (!mount) return mount.error();
    mounts.push_back(std::move(*mount));
  }
  return mounts;
}

// The device nodes runc creates after the mounts land like mounts of nothing.
Result<std::vector<MountToCome>> devices_of(const Json& spec) {
  std::vector<MountToCome> nodes;
  const Json::json_pointer at("/linux/devices");
  if (!spec.contains(at)) return nodes;
  const Json& list = spec.at(at);
  if (!list.is_array()) return Error{"linux.devices is not an array"};
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& d = list[i];
    const std::string where = "linux.devices[" + std::to_string(i) + "]";
    if (!d.is_object()) return field_error(where, "is not an object");
    auto path = string_field(d, "path", where, true);
    if (!path) return path.error();
    nodes.push_back(MountToCome{*path, "", false, false});
  }
  return nodes;
}

bool has_user_namespace(const Json& spec) {
  const Json::json_pointer at("/linux/namespaces");
  if (!spec.contains(at) || !spec.at(at).is_array()) return false;
  for (const auto& ns : spec.at(at)) {
    const Json* type = ns.is_object() ? member(ns, "type") : nullptr;
    if (type == nullptr || (type->is_string() && type->get<std::string>() == "user")) return true;
  }
  return false;
}

std::size_t entries_of(const Json& spec, const char* pointer) {
  const Json::json_pointer at(pointer);
  return spec.contains(at) && spec.at(at).is_array() ? spec.at(at).size() : 0;
}

}  // namespace

Result<std::vector<MountToCome>> mounts_to_come(const Json& spec, const std::string& bundle) {
  // Where each lands is checked against every earlier one.
  const std::size_t count = entries_of(spec, "/mounts") + entries_of(spec, "/linux/devices");
  if (count > kMaxMountsToCome)
    return Error{"the spec has " + std::to_string(count) + " mounts and device nodes, more than " +
                 std::to_string(kMaxMountsToCome)};
  auto mounts = spec_mounts(spec, bundle);
  if (!mounts) return mounts.error();
  auto nodes = devices_of(spec);
  if (!nodes) return nodes.error();
  mounts->insert(mounts->end(), nodes->begin(), nodes->end());
  return mounts;
}

Status check_writes_as_hook_would(const Json& spec) {
  if (::geteuid() != 0) return Error{"the runtime does not run as root"};
  if (has_user_namespace(spec)) return Error{"the container has a user namespace"};
  return {};
}

}  // namespace gcr
