// The createContainer hooks the shim injects (gpu-ctk hook update-ldcache / create-symlinks)
// and the clean-up of hooks they supersede.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "edits/edits.h"
#include "json/strict_json.h"

namespace gcr {

inline constexpr int kHookTimeoutSeconds = 30;

// gpu-ctk hook create-symlinks --link <target>::<link>...
[[nodiscard]] Hook create_symlinks_hook(const Config::Hooks& hooks,
                                        const std::vector<std::string>& links);
// gpu-ctk hook update-ldcache --ldconfig-path <@path> --folder <dir>...
[[nodiscard]] Hook update_ldcache_hook(const Config::Hooks& hooks,
                                       const std::vector<std::string>& folders);

// Removes what a GPU container no longer needs once the shim has done the work: the
// nvidia-container-runtime-hook prestart hook docker --gpus adds, the nvidia-container-cli one
// ctr --gpus adds, and hooks an earlier run of this shim injected (so running twice on one
// bundle adds nothing twice).
void remove_superseded_hooks(Json& spec, const Config::Hooks& hooks);

}  // namespace gcr
