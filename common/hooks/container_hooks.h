// What the createContainer hooks do inside a container rootfs (gpu-ctk hook ...).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "hooks/ld_so_conf.h"
#include "hooks/rootfs.h"
#include "ldcache/image_budget.h"

namespace gcr {

inline constexpr const char* kLdConfigDropIn = "00-gpu-container-runtime.conf";
// Its path in the image (a literal: the shim runs no static initializer of ours).
inline constexpr const char* kLdConfigDropInPath =
    "/etc/ld.so.conf.d/00-gpu-container-runtime.conf";

// Whether `path` is absolute, not "/", and without empty, "." or ".." components.
[[nodiscard]] bool is_clean_absolute(const std::string& path);

// Makes `folders` known to the container's loader (a drop-in under /etc/ld.so.conf.d for those
// the image does not name, and /etc/ld.so.conf with an include when the image has none), then
// rebuilds /etc/ld.so.cache: in process when that is exactly ldconfig's result and the image is
// within `budget`, else with the host ldconfig `ldconfig_spec` ("@/sbin/ldconfig") in its
// sandbox (budget.exceeded() then says which budget the image went over). The folder our
// enable-cuda-compat drop-in names (hooks/cuda_compat.h) comes before `folders`. `links_made`:
// the "<target>::<link>" links made just before, which ldconfig will index too.
[[nodiscard]] Status update_ldcache(const RootFs& root, const std::vector<std::string>& folders,
                                    const std::string& ldconfig_spec, ImageBudget& budget,
                                    const std::vector<std::string>& links_made = {});

// The checks update_ldcache makes before it writes anything (folders absolute without "..",
// ldconfig "@" and a static host binary only root can replace): the host ldconfig to run.
[[nodiscard]] Result<std::string> check_ldcache_request(const std::vector<std::string>& folders,
                                                        const std::string& ldconfig_spec);

// The folders, in request order, that no configuration file of the image but our own drop-in
// names: the drop-in lists only these (NVIDIA's hook also leaves out the folders the image
// already knows; they are scanned first all the same, as on ldconfig's command line). All of
// them when the image's configuration could not be read.
[[nodiscard]] std::vector<std::string> folders_to_declare(const Result<LdSoConf>& conf,
                                                          const std::vector<std::string>& folders);

// The drop-in naming `declared`, as update_ldcache writes it.
[[nodiscard]] std::string drop_in_content(const std::vector<std::string>& declared);

// Writes the drop-in naming `declared` (none: no drop-in) and /etc/ld.so.conf when the image
// has none. `conf`, the image's configuration read before: an ld.so.conf it read is not looked
// for again, and a drop-in it read that holds what would be written is not read again.
[[nodiscard]] Status write_loader_configuration(const RootFs& root, const Result<LdSoConf>& conf,
                                                const std::vector<std::string>& declared);

struct LinkSpec {
  std::string target;
  std::string link;
};

// "<target>::<link>" split in two; an error naming it when it is not that form.
[[nodiscard]] Result<LinkSpec> parse_link_spec(const std::string& spec);

// The link paths of the "<target>::<link>" specs of that form.
[[nodiscard]] std::vector<std::string> link_paths(const std::vector<std::string>& specs);

// Creates each "<target>::<link>" symlink (link: an absolute in-container path without
// ".."), replacing a different existing entry atomically; an identical link is left alone.
// `wrote`, when given, is set once a link or a directory for one was made.
[[nodiscard]] Status create_symlinks(const RootFs& root, const std::vector<std::string>& links,
                                     bool* wrote = nullptr);

}  // namespace gcr
