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

// The checks update_ldcache makes before it writes anything (folders absolute without "..",
// ldconfig "@" and a static host binary only root can replace): the host ldconfig to run.
[[nodiscard]] Result<std::string> check_ldcache_request(const std::vector<std::string>& folders,
                                                        const std::string& ldconfig_spec);

// The drop-in naming `folders`, as update_ldcache writes it.
[[nodiscard]] std::string drop_in_content(const std::vector<std::string>& folders);

// Writes the drop-in naming `folders` (none: no drop-in) and /etc/ld.so.conf when the image
// has none.
[[nodiscard]] Status write_loader_configuration(const RootFs& root,
                                                const std::vector<std::string>& folders);

struct LinkSpec {
  std::string target;
  std::string link;
};

// "<target>::<link>" split in two; an error naming it when it is not that form.
[[nodiscard]] Result<LinkSpec> parse_link_spec(const std::string& spec);

// Creates each "<target>::<link>" symlink (link: an absolute in-container path without
// ".."), replacing a different existing entry atomically; an identical link is left alone.
[[nodiscard]] Status create_symlinks(const RootFs& root, const std::vector<std::string>& links);

}  // namespace gcr
