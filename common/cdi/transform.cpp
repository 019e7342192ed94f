#include "cdi/transform.h"

#include <string_view>
#include <vector>

#include "base/text.h"

namespace gcr {
namespace {

// A root as given, cleaned as NVIDIA's tools clean it: no empty or `.` component, `..` taking
// the one before it (none above /), no trailing slash.
Result<std::string> root_of(const std::string& flag, const std::string& value) {
  if (value.empty() || value.front() != '/')
    return Error{"--" + flag + " `" + printable(value, 256) + "` must be an absolute path"};
  std::vector<std::string_view> parts;
  for (auto part : split(value, '/')) {
    if (part.empty() || part == ".") continue;
    if (part != "..")
      parts.push_back(part);
    else if (!parts.empty())
      parts.pop_back();
  }
  std::string root;
  for (auto part : parts) (root += '/') += part;
  return root.empty() ? "/" : root;
}

// The OCI hook stages whose hooks run in the container's namespaces: their arguments are
// container paths; a startContainer hook's program is also found in the container.
bool args_in_container(const Hook& hook) {
  return hook.hook_name == "createContainer" || hook.hook_name == "startContainer";
}

bool path_in_container(const Hook& hook) {
  return hook.hook_name == "startContainer";
}

std::string transformed_arg(const std::string& arg, const RootTransform& t) {
  const auto sep = arg.find("::");
  if (sep == std::string::npos) return transformed_path(arg, t);
  return transformed_path(arg.substr(0, sep), t) + "::" + transformed_path(arg.substr(sep + 2), t);
}

void transform_hook(Hook& hook, const RootTransform& t) {
  const bool container = t.side == RootSide::kContainer;
  if (path_in_container(hook) == container) hook.path = transformed_path(hook.path, t);
  if (args_in_container(hook) != container) return;
  for (auto& arg : hook.args) arg = transformed_arg(arg, t);
}

// A node without a host path is at its path on the host too: moving one of the two paths
// gives it a host path of its own, so the other keeps its meaning.
void transform_device_node(DeviceNode& node, const RootTransform& t) {
  if (t.side == RootSide::kHost) {
    const std::string& host = node.host_path.empty() ? node.path : node.host_path;
    std::string moved = transformed_path(host, t);
    if (moved != host) node.host_path = std::move(moved);
    return;
  }
  std::string moved = transformed_path(node.path, t);
  if (moved == node.path) return;
  if (node.host_path.empty()) node.host_path = node.path;
  node.path = std::move(moved);
}

void transform_edits(ContainerEdits& edits, const RootTransform& t) {
  for (auto& node : edits.device_nodes) transform_device_node(node, t);
  for (auto& hook : edits.hooks) transform_hook(hook, t);
  for (auto& mount : edits.mounts) {
    std::string& path = t.side == RootSide::kHost ? mount.host_path : mount.container_path;
    path = transformed_path(path, t);
  }
}

}  // namespace

Result<RootTransform> root_transform(const std::string& from, const std::string& to,
                                     const std::string& relative_to) {
  RootTransform t;
  if (relative_to == "container")
    t.side = RootSide::kContainer;
  else if (relative_to != "host")
    return Error{"--relative-to `" + printable(relative_to, 64) + "` is not host or container"};
  auto source = root_of("from", from);
  if (!source) return source.error();
  auto target = root_of("to", to.empty() ? "/" : to);
  if (!target) return target.error();
  t.from = std::move(*source);
  t.to = std::move(*target);
  return t;
}

std::string transformed_path(const std::string& path, const RootTransform& t) {
  std::string rest;
  if (t.from == "/") {
    if (path.empty() || path.front() != '/') return path;
    rest = path == "/" ? "" : path;
  } else if (path == t.from) {
    rest = "";
  } else if (path.starts_with(t.from) && path[t.from.size()] == '/') {
    rest = path.substr(t.from.size());
  } else {
    return path;
  }
  if (t.to == "/") return rest.empty() ? "/" : rest;
  return t.to + rest;
}

void transform_cdi_root(CdiSpec& spec, const RootTransform& t) {
  transform_edits(spec.edits, t);
  for (auto& device : spec.devices) transform_edits(device.edits, t);
  raise_cdi_version(spec);
}

}  // namespace gcr
