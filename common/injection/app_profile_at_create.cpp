#include "injection/app_profile_at_create.h"

#include <unistd.h>

#include <optional>

#include "base/text.h"
#include "edits/injected_hooks.h"
#include "hooks/app_profile.h"
#include "injection/runc_to_come.h"

namespace gcr {
namespace {

// Where our update-application-profile hook is among the createContainer hooks.
std::optional<std::size_t> find_app_profile_hook(const Json& spec, const Config::Hooks& hooks) {
  const Json::json_pointer at("/hooks/createContainer");
  if (!spec.contains(at) || !spec.at(at).is_array()) return std::nullopt;
  const Json& list = spec.at(at);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (is_application_profile_hook(list[i], hooks)) return i;
  }
  return std::nullopt;
}

// Nothing runc mounts lands on the profile or a directory above it.
Status check_can_write_now(const Json& spec, ContainerRootFs& rootfs) {
  if (::geteuid() != 0) return Error{"the runtime does not run as root"};
  if (has_user_namespace(spec)) return Error{"the container has a user namespace"};
  const auto& root = rootfs.get();
  if (!root) return root.error();
  const auto& landed = rootfs.landed_mounts();
  if (!landed) return landed.error();
  auto profile =
      root->canonical(std::string(kAppProfileDir) + "/" + kAppProfileName, rootfs.known());
  if (!profile) return profile.error();
  for (const auto& destination : landed->destinations) {
    if (path_is_under(*profile, destination))
      return Error{"the mount at " + destination + " covers " + *profile};
  }
  return {};
}

}  // namespace

void write_app_profile_at_create(Json& spec, ContainerRootFs& root, const Config& config,
                                 const Logger& logger) {
  const auto index = find_app_profile_hook(spec, config.hooks);
  if (!index) return;
  constexpr std::string_view kWhat = "application profile: ";
  if (auto can = check_can_write_now(spec, root); !can) {
    logger.debug(std::string(kWhat) + "left to the hook: " + can.error().message);
    return;
  }
  bool made_dirs = false;
  if (auto written = write_app_profile(*root.get(), visible_gpu_mask(spec), &made_dirs); !written)
    logger.warning(std::string(kWhat) + "nothing done: " + written.error().message);
  if (made_dirs) root.known().forget_what_writes_change();
  erase_created_container_hook(spec, *index);
}

}  // namespace gcr
