#include "injection/app_profile_at_create.h"

#include <optional>

#include "base/text.h"
#include "edits/injected_hooks.h"
#include "hooks/app_profile.h"
#include "injection/runc_to_come.h"

namespace gcr {
namespace {

constexpr std::string_view kWhat = "application profile: ";

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

// What can be known now of the profile the container would see.
struct ProfilePlace {
  std::string path;                       // in the rootfs: its folder resolved, its name kept
  std::optional<std::string> mounted_at;  // a mount or node runc makes at, above or below it
};

// An error when the shim cannot write the profile as the hook would, or cannot tell where
// runc's mounts land: the hook does it then. The file's own name is not followed (a link there
// is replaced).
Result<ProfilePlace> place_profile(const Json& spec, ContainerRootFs& rootfs) {
  if (auto s = check_writes_as_hook_would(spec); !s) return s.error();
  const auto& root = rootfs.get();
  if (!root) return root.error();
  const auto& landed = rootfs.landed_mounts();
  if (!landed) return landed.error();
  auto dir = root->canonical(kAppProfileDir, rootfs.known());
  if (!dir) return dir.error();
  ProfilePlace place{child_path(*dir, kAppProfileName), std::nullopt};
  for (const auto& destination : landed->destinations) {
    if (path_is_under(place.path, destination) || path_is_under(destination, place.path))
      place.mounted_at = destination;
  }
  return place;
}

// Writes the profile now, or says why not; false when the hook must do it.
bool write_now(const Json& spec, ContainerRootFs& root, std::uint64_t mask, const Logger& logger) {
  auto place = place_profile(spec, root);
  if (!place) {
    logger.debug(std::string(kWhat) + "left to the hook: " + place.error().message);
    return false;
  }
  // Hidden by a volume, or in the way of one: the hook could not write there either (its
  // resolver crosses no mount), and nothing is written into a volume.
  if (place->mounted_at) {
    logger.debug(std::string(kWhat) + "none: the mount at " + *place->mounted_at + " lands on " +
                 place->path);
    return true;
  }
  const Status written = write_app_profile(*root.get(), mask);
  root.known().forget_what_writes_change();
  if (!written) logger.warning(std::string(kWhat) + "nothing done: " + written.error().message);
  return true;
}

}  // namespace

void write_app_profile_at_create(Json& spec, ContainerRootFs& root, const Config& config,
                                 const Logger& logger) {
  const auto index = find_app_profile_hook(spec, config.hooks);
  if (!index) return;
  const std::uint64_t mask = visible_gpu_mask(spec);
  bool done = mask == 0;  // no GPU: no profile
  try {
    done = done || write_now(spec, root, mask, logger);
  } catch (const std::exception& e) {
    // out of memory, most likely: the hook still does the work
    logger.debug(std::string(kWhat) + "left to the hook: " + e.what());
  }
  if (done) erase_created_container_hook(spec, *index);
}

}  // namespace gcr
