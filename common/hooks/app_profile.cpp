#include "hooks/app_profile.h"

#include <charconv>
#include <string_view>

#include "json/fields.h"

namespace gcr {
namespace {

// /dev/nvidia<N>: a GPU's node (not nvidiactl, nvidia-uvm, nvidia-modeset or nvidia-caps/...).
bool is_gpu_node_path(std::string_view path) {
  constexpr std::string_view kPrefix = "/dev/nvidia";
  if (path.substr(0, kPrefix.size()) != kPrefix || path.size() == kPrefix.size()) return false;
  for (const char c : path.substr(kPrefix.size())) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::uint64_t visible_gpu_mask(const Json& spec) {
  const Json::json_pointer at("/linux/devices");
  if (!spec.is_object() || !spec.contains(at) || !spec.at(at).is_array()) return 0;
  std::uint64_t mask = 0;
  for (const Json& device : spec.at(at)) {
    const Json* path = device.is_object() ? member(device, "path") : nullptr;
    const Json* type = device.is_object() ? member(device, "type") : nullptr;
    const Json* minor = device.is_object() ? member(device, "minor") : nullptr;
    if (path == nullptr || !path->is_string() || type == nullptr || *type != "c" ||
        minor == nullptr || !minor->is_number_integer())
      continue;
    if (!is_gpu_node_path(path->get_ref<const std::string&>())) continue;
    const auto n = minor->get<std::int64_t>();
    if (n >= 0 && n < 64) mask |= std::uint64_t{1} << n;
  }
  return mask;
}

std::string app_profile_text(std::uint64_t mask) {
  char hex[16];
  const auto end = std::to_chars(hex, hex + sizeof hex, mask, 16).ptr;
  return R"({"profiles": [{"name": "_container_", "settings": ["EGLVisibleDGPUDevices", 0x)" +
         std::string(hex, end) + R"(]}], "rules": [{"pattern": [], "profile": "_container_"}]})" +
         "\n";
}

Status write_app_profile(const RootFs& root, std::uint64_t mask) {
  if (mask == 0) return {};
  const std::string path = std::string(kAppProfileDir) + "/" + kAppProfileName;
  auto dir = root.make_dirs(kAppProfileDir);
  if (!dir) return dir.error().wrap("cannot write " + path);
  // Rewritten before every start, as the loader cache is: not worth a disk round trip.
  if (auto s = write_file_atomic_at(dir->get(), kAppProfileName, app_profile_text(mask),
                                    FileOwner{}, Durability::kNone);
      !s)
    return s.error().wrap("cannot write " + path);
  return {};
}

}  // namespace gcr
