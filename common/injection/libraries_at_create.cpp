#include "injection/libraries_at_create.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "base/text.h"
#include "edits/apply.h"
#include "edits/injected_hooks.h"
#include "hooks/cuda_compat.h"
#include "hooks/libraries_at_create.h"
#include "injection/runc_to_come.h"
#include "json/fields.h"

namespace gcr {
namespace {

struct FoundHook {
  std::size_t index = 0;
  LibrariesRequest request;
};

Result<FoundHook> find_library_hook(const Json& spec, const Config::Hooks& hooks) {
  const Json::json_pointer at("/hooks/createContainer");
  if (!spec.contains(at) || !spec.at(at).is_array()) return Error{"no createContainer hook"};
  const Json& list = spec.at(at);
  std::optional<FoundHook> found;
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto request = read_update_libraries_hook(list[i], hooks);
    if (!request) continue;
    if (found) return Error{"two update-libraries hooks"};
    found = FoundHook{i, std::move(*request)};
  }
  if (!found) return Error{"no update-libraries hook in the form the shim writes"};
  return std::move(*found);
}

// Hooks runc runs before ours (prestart, createRuntime, createContainer hooks listed first)
// may change what ldconfig reads; so may one after it. Our device-node hook changes nothing
// ldconfig reads. `ours_in_spec`: the update-libraries hook is one of the spec's createContainer
// hooks.
Status check_no_other_hooks(const Json& spec, const Config::Hooks& ours, bool ours_in_spec) {
  const Json* hooks = member(spec, "hooks");
  if (hooks == nullptr) return {};
  for (const char* kind : {"prestart", "createRuntime", "createContainer"}) {
    const Json* list = hooks->is_object() ? member(*hooks, kind) : nullptr;
    if (list == nullptr) continue;
    if (!list->is_array()) return Error{std::string("the spec's ") + kind + " hooks are no list"};
    const auto others = std::count_if(list->begin(), list->end(), [&](const Json& hook) {
      return !is_device_node_modification_hook(hook, ours);
    });
    if (others > (ours_in_spec && std::string(kind) == "createContainer" ? 1 : 0))
      return Error{std::string("the spec has other ") + kind + " hooks"};
  }
  return {};
}

Status try_now(const Json& spec, const LibrariesRequest& request, bool hook_in_spec,
               ContainerRootFs& rootfs, const Config& config) {
  if (auto s = check_writes_as_hook_would(spec); !s) return s;
  if (auto s = check_no_other_hooks(spec, config.hooks, hook_in_spec); !s) return s;
  const auto& root = rootfs.get();
  if (!root) return root.error();
  const auto& mounts = rootfs.landed_mounts();
  if (!mounts) return mounts.error();
  return update_libraries_at_create(*root, request, *mounts, rootfs.known());
}

// The libraries request as its hook, at `index` among the createContainer hooks.
void insert_libraries_hook(Json& spec, const LibrariesRequest& request, std::size_t index,
                           const Config::Hooks& hooks) {
  Json& list = object_slot(object_slot(spec, "hooks"), "createContainer");
  if (!list.is_array()) list = Json::array();
  list.insert(list.begin() + static_cast<std::ptrdiff_t>(std::min(index, list.size())),
              hook_entry(update_libraries_hook(hooks, request.folders, request.links)));
}

// The work done now: with the live driver's request, or the hook the spec holds (then removed).
Status do_now(Json& spec, const std::optional<LibrariesRequest>& libraries, ContainerRootFs& root,
              const Config& config) {
  if (libraries) return try_now(spec, *libraries, false, root, config);
  auto hook = find_library_hook(spec, config.hooks);
  if (!hook) return hook.error();
  if (auto s = try_now(spec, hook->request, true, root, config); !s) return s;
  erase_created_container_hook(spec, hook->index);
  return {};
}

struct FoundCompatHook {
  std::size_t index = 0;
  CudaCompatRequest request;
};

// Our enable-cuda-compat hook, when the spec holds one.
std::optional<FoundCompatHook> find_compat_hook(const Json& spec, const Config::Hooks& hooks) {
  const Json::json_pointer at("/hooks/createContainer");
  if (!spec.contains(at) || !spec.at(at).is_array()) return std::nullopt;
  const Json& list = spec.at(at);
  std::optional<FoundCompatHook> found;
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto request = read_enable_cuda_compat_hook(list[i], hooks);
    if (!request) continue;
    if (found) return std::nullopt;  // two: left to the hooks
    found = FoundCompatHook{i, std::move(*request)};
  }
  return found;
}

// The decision on the image; nothing when the rootfs cannot be opened here.
std::optional<CudaCompat> judge_image(const Result<RootFs>& root, const CudaCompatRequest& asked,
                                      const Logger& logger) {
  constexpr std::string_view kWhat = "CUDA forward compatibility: ";
  if (!root) {
    logger.debug(std::string(kWhat) + "left to the hooks: " + root.error().message);
    return std::nullopt;
  }
  ImageBudget budget;
  auto compat =
      find_cuda_compat(*root, asked.dir, HostDriver{asked.host_driver_version, {}}, budget);
  if (!compat) {
    logger.warning(std::string(kWhat) + "nothing done: " + compat.error().message);
    return CudaCompat{std::nullopt, compat.error().message};
  }
  if (compat->folder) {
    logger.info(std::string(kWhat) + *compat->folder + " loaded first: " + compat->why);
  } else {
    logger.debug(std::string(kWhat) + "nothing done: " + compat->why);
  }
  return std::move(*compat);
}

// `args` (update-libraries and its flags) with `folder` as the first --folder.
void insert_first_folder(Json& args, const std::string& folder) {
  auto at = std::find(args.begin(), args.end(), "--folder");
  args.insert(args.insert(at, "--folder") + 1, folder);
}

// runc refuses a root.path that is a symlink (a relative one counts from the bundle's real
// path, where runc works): nothing is written through one.
Result<RootFs> open_container_rootfs(const Json& spec, const std::string& bundle) {
  const Json::json_pointer root_path("/root/path");
  if (!spec.contains(root_path) || !spec.at(root_path).is_string())
    return Error{"the spec has no root.path"};
  std::string path = spec.at(root_path).get<std::string>();
  if (path.empty()) return Error{"the spec has no root.path"};
  if (path.front() != '/') {
    char* real_bundle = ::realpath(bundle.empty() ? "." : bundle.c_str(), nullptr);
    if (real_bundle == nullptr) return Error{"cannot resolve the bundle " + bundle};
    path = std::string(real_bundle) + "/" + path;
    std::free(real_bundle);
  }
  auto root = RootFs::open(path);
  if (!root) return root.error();
  auto real = root->host_path();
  if (!real) return real.error();
  if (*real != clean_path(path) || *real == "/")
    return Error{"the rootfs " + path + " is a symlink or the host's root"};
  return root;
}

}  // namespace

const Result<RootFs>& ContainerRootFs::get() {
  if (!root_) root_.emplace(open_container_rootfs(spec_, bundle_));
  return *root_;
}

const Result<LandedMounts>& ContainerRootFs::landed_mounts() {
  if (landed_) return *landed_;
  const auto& root = get();
  if (!root) return landed_.emplace(root.error());
  auto mounts = mounts_to_come(spec_, bundle_);
  if (!mounts) return landed_.emplace(mounts.error());
  return landed_.emplace(land_mounts(*root, std::move(*mounts), known_));
}

void put_cuda_compat_first(Json& spec, std::optional<LibrariesRequest>& libraries,
                           ContainerRootFs& root, const Config& config,
                           const std::optional<std::string>& live_driver_version,
                           const Logger& logger) {
  // Where the folder goes: the live driver's request, else the hook the spec holds.
  std::optional<FoundHook> in_spec;
  if (!libraries) {
    auto found = find_library_hook(spec, config.hooks);
    if (!found) return;
    in_spec = std::move(*found);
  }
  const auto from_spec = find_compat_hook(spec, config.hooks);
  std::optional<CudaCompatRequest> asked;
  if (from_spec) {
    asked = from_spec->request;
  } else if (live_driver_version) {
    asked = CudaCompatRequest{*live_driver_version, config.requests.cuda_compat_dir};
  }
  if (!asked || asked->dir.empty()) return;
  const auto compat = judge_image(root.get(), *asked, logger);
  if (!compat) return;
  if (compat->folder && libraries)
    libraries->folders.insert(libraries->folders.begin(), *compat->folder);
  if (compat->folder && in_spec)
    insert_first_folder(spec["hooks"]["createContainer"][in_spec->index]["args"], *compat->folder);
  if (from_spec) erase_created_container_hook(spec, from_spec->index);
}

void run_library_hook_at_create(Json& spec, const std::optional<LibrariesRequest>& libraries,
                                std::size_t hook_at, ContainerRootFs& root, const Config& config,
                                const Logger& logger) {
  Status done = Error{"not tried"};
  try {
    done = do_now(spec, libraries, root, config);
  } catch (const std::exception& e) {
    done = Error{e.what()};  // out of memory, most likely: the hook still does the work
  }
  if (done) {
    logger.debug("links and loader cache written into the rootfs at create; no hook");
    return;
  }
  logger.debug("the loader cache is left to the hook: " + done.error().message);
  if (libraries) insert_libraries_hook(spec, *libraries, hook_at, config.hooks);
}

}  // namespace gcr
