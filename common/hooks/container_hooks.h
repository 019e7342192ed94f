// What the createContainer hooks do inside a container rootfs (gpu-ctk hook ...).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "hooks/rootfs.h"

namespace gcr {

inline constexpr const char* kLdConfigDropIn = "00-gpu-container-runtime.conf";

// Makes `folders` known to the container's loader (a drop-in under /etc/ld.so.conf.d, and
// /etc/ld.so.conf with an include when the image has none), then rebuilds
// /etc/ld.so.cache with the host ldconfig `ldconfig_spec` ("@/sbin/ldconfig").
[[nodiscard]] Status update_ldcache(const RootFs& root, const std::vector<std::string>& folders,
                                    const std::string& ldconfig_spec);

// Creates each "<target>::<link>" symlink (link: an absolute in-container path without
// ".."), replacing a different existing entry atomically; an identical link is left alone.
[[nodiscard]] Status create_symlinks(const RootFs& root, const std::vector<std::string>& links);

}  // namespace gcr
