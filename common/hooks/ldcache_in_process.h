// The container's loader cache updated without running ldconfig: the image's own
// /etc/ld.so.cache, kept as its ldconfig wrote it, gains the libraries of the injected folders
// that it does not account for, with their soname links, in the order ldconfig would give
// (the folders first, as ldconfig's command line puts them). Only when the result is exactly
// ldconfig's: the cache is as new as every configuration file and library directory it covers,
// and each folder holds nothing this code cannot index as ldconfig does. Otherwise the plan is
// an error saying why, and the caller runs ldconfig.
#pragma once

#include <sys/stat.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "hooks/ld_so_conf.h"
#include "hooks/rootfs.h"
#include "ldcache/elf_library.h"
#include "ldcache/image_budget.h"

namespace gcr {

struct LdcachePlan {
  std::string cache;               // the new /etc/ld.so.cache
  std::vector<std::string> links;  // "<target>::<link>" soname links to create first
  // What the result depends on, as named in the image: files read (the cache, the
  // configuration) and the directories whose entries ldconfig would scan.
  std::vector<std::string> files_read;
  std::vector<std::string> directories_scanned;
  std::vector<std::string> includes;  // the include patterns, whose matches are read
  // The image's cache as it was read (its fstat) when it already holds exactly `cache`.
  std::optional<struct stat> cache_as_read;
};

// A file a folder will hold once runc has mounted it: where it is on the host and, when
// discovery read it (see DriverLibrary::elf), its soname and flags, used instead of reading it.
struct PendingFile {
  std::string host;
  std::optional<ElfLibrary> elf;
};
// In-root path -> the file mounted there.
using PendingFiles = std::map<std::string, PendingFile>;

// Reads only, within `budget` (the one `conf` was read with). `conf` is the image's loader
// configuration, read before anything was written; `declared` the folders our drop-in will list
// (none: no drop-in is written, and one the image has is its own). `pending` files count as the
// folders' entries (over any the image has at that name) and are read on the host. A cache
// holding a name the loader cannot order (loader_orders) is left to ldconfig. Directories
// `known` holds are used from it (see ResolvedDirs). `links_made`: the in-root paths of the
// links the request made before (libGLX_indirect.so.0), which ldconfig indexes where it scans
// their directory.
[[nodiscard]] Result<LdcachePlan> plan_ldcache_update(
    const RootFs& root, const Result<LdSoConf>& conf, const std::vector<std::string>& folders,
    const std::vector<std::string>& declared, ImageBudget& budget, const PendingFiles& pending = {},
    ResolvedDirs* known = nullptr, const std::vector<std::string>& links_made = {});

// Whether ldconfig looks at a directory entry of this name: libraries (lib*.so*, ld-*.so*)
// and the hwcap subdirectories it descends into.
[[nodiscard]] bool ldconfig_reads_entry(std::string_view name);

// Creates the links, then writes the cache atomically.
[[nodiscard]] Status apply_ldcache_plan(const RootFs& root, const LdcachePlan& plan);

}  // namespace gcr
