#include "hooks/libraries_at_create.h"

#include <fcntl.h>
#include <fnmatch.h>

#include "base/text.h"
#include "hooks/container_hooks.h"
#include "hooks/cuda_compat.h"
#include "hooks/library_links.h"
#include "hooks/musl_path.h"

namespace gcr {
namespace {

// The first component of `path` below `dir` (path strictly under dir).
std::string first_below(const std::string& path, const std::string& dir) {
  const std::size_t start = dir == "/" ? 1 : dir.size() + 1;
  return path.substr(start, path.find('/', start) - start);
}

bool strictly_under(const std::string& path, const std::string& dir) {
  return path != dir && path_is_under(path, dir);
}

Result<std::vector<std::string>> resolve_all(const RootFs& root,
                                             const std::vector<std::string>& paths,
                                             ResolvedDirs& known) {
  std::vector<std::string> out;
  for (const auto& path : paths) {
    auto resolved = root.canonical(path, known);
    if (!resolved) return resolved.error();
    out.push_back(std::move(*resolved));
  }
  return out;
}

// `path` with its directory resolved in the root and its last part kept as written (an include
// pattern, a link, which are not followed).
Result<std::string> in_resolved_directory(const RootFs& root, const std::string& path,
                                          ResolvedDirs& known) {
  auto dir = root.canonical(dirname_of(path), known);
  if (!dir) return dir.error();
  return child_path(*dir, basename_of(path));
}

// The plan's paths as they resolve in the root (an include keeps its pattern's last part),
// with the paths the library links in its directories lead through among the files read.
Result<LdcachePlan> resolved_reads(const RootFs& root, const LdcachePlan& plan, ImageBudget& budget,
                                   ResolvedDirs& known) {
  LdcachePlan out;
  auto files = resolve_all(root, plan.files_read, known);
  if (!files) return files.error();
  auto dirs = resolve_all(root, plan.directories_scanned, known);
  if (!dirs) return dirs.error();
  auto through_links = library_link_paths(root, *dirs, budget, known);
  if (!through_links) return through_links.error();
  out.files_read = std::move(*files);
  out.files_read.insert(out.files_read.end(), through_links->begin(), through_links->end());
  out.directories_scanned = std::move(*dirs);
  for (const auto& pattern : plan.includes) {
    auto include = in_resolved_directory(root, pattern, known);
    if (!include) return include.error();
    out.includes.push_back(std::move(*include));
  }
  return out;
}

// The library files the mounts put into the folders: in-root path (under the folder's name)
// -> host path, with the soname and flags discovery read of it (`host_libraries`, by host
// path). Marks them in `pending_mount`.
Result<PendingFiles> pending_files(const std::vector<std::string>& folders,
                                   const std::vector<std::string>& resolved_folders,
                                   const std::map<std::string, ElfLibrary>& host_libraries,
                                   const std::vector<MountToCome>& mounts,
                                   const std::vector<std::string>& destinations,
                                   std::vector<bool>& pending_mount) {
  PendingFiles pending;
  for (std::size_t i = 0; i < mounts.size(); ++i) {
    const std::string name = basename_of(destinations[i]);
    if (!ldconfig_reads_entry(name)) continue;
    for (std::size_t j = 0; j < folders.size(); ++j) {
      if (dirname_of(destinations[i]) != resolved_folders[j]) continue;
      if (!mounts[i].bind) return Error{"a mount that is not a bind at " + destinations[i]};
      const auto read = host_libraries.find(mounts[i].source);
      pending[folders[j] + "/" + name] = PendingFile{
          mounts[i].source,
          read == host_libraries.end() ? std::nullopt : std::optional<ElfLibrary>(read->second)};
      pending_mount[i] = true;
    }
  }
  return pending;
}

// What is written now must be what the container sees: no mount may cover a folder or a link.
Status check_nothing_hidden(const RootFs& root, const LibrariesRequest& request,
                            const std::vector<std::string>& folders,
                            const std::vector<std::string>& destinations,
                            const std::vector<bool>& pending_mount, ResolvedDirs& known) {
  std::vector<std::string> links;
  for (const auto& spec : request.links) {
    auto parsed = parse_link_spec(spec);
    if (!parsed) return parsed.error();
    auto link = in_resolved_directory(root, parsed->link, known);
    if (!link) return link.error();
    links.push_back(std::move(*link));
  }
  for (std::size_t i = 0; i < destinations.size(); ++i) {
    for (const auto& link : links) {
      if (path_is_under(link, destinations[i]) || path_is_under(destinations[i], link))
        return Error{"a mount at the link " + link};
    }
    if (pending_mount[i]) continue;
    for (const auto& folder : folders) {
      if (path_is_under(folder, destinations[i]))
        return Error{"the mount at " + destinations[i] + " covers " + folder};
    }
  }
  return {};
}

// Which of the landed mounts put libraries into the folders, and that none hides what is
// written now.
struct MountPlacement {
  std::vector<bool> pending_mount;
  PendingFiles pending;
};

Result<MountPlacement> place_mounts(const RootFs& root, const LibrariesRequest& request,
                                    const LandedMounts& landed, ResolvedDirs& known) {
  auto folders = resolve_all(root, request.folders, known);
  if (!folders) return folders.error();
  std::vector<bool> pending_mount(landed.mounts.size(), false);
  auto pending = pending_files(request.folders, *folders, request.host_libraries, landed.mounts,
                               landed.destinations, pending_mount);
  if (!pending) return pending.error();
  if (auto s =
          check_nothing_hidden(root, request, *folders, landed.destinations, pending_mount, known);
      !s)
    return s.error();
  return MountPlacement{std::move(pending_mount), std::move(*pending)};
}

}  // namespace

Result<LandedMounts> land_mounts(const RootFs& root, std::vector<MountToCome> mounts,
                                 ResolvedDirs& known) {
  std::vector<std::string> literal;
  std::vector<std::string> landed;
  for (const auto& mount : mounts) {
    if (mount.destination.empty() || mount.destination.front() != '/')
      return Error{"a mount at the relative destination " + quote(mount.destination)};
    const std::string name = clean_path(mount.destination);
    auto at = root.canonical(mount.destination, known);
    if (!at) return at.error();
    for (std::size_t j = landed.size(); j-- > 0;) {
      const bool by_name = strictly_under(name, literal[j]) || strictly_under(name, landed[j]);
      if (!by_name && !strictly_under(*at, landed[j])) continue;
      if (!mounts[j].fresh || !by_name)
        return Error{"the mount at " + name + " lies inside the mount at " + landed[j] +
                     ": where it lands depends on what that one holds"};
      const std::string& base = strictly_under(name, literal[j]) ? literal[j] : landed[j];
      *at = landed[j] + name.substr(base == "/" ? 0 : base.size());
      break;
    }
    literal.push_back(name);
    landed.push_back(std::move(*at));
  }
  return LandedMounts{std::move(mounts), std::move(landed)};
}

bool mount_changes_plan(const std::string& destination, const LdcachePlan& plan) {
  for (const auto& file : plan.files_read) {
    if (path_is_under(file, destination)) return true;
  }
  for (const auto& dir : plan.directories_scanned) {
    if (path_is_under(dir, destination)) return true;
    if (strictly_under(destination, dir) && ldconfig_reads_entry(first_below(destination, dir)))
      return true;
  }
  for (const auto& pattern : plan.includes) {
    const std::string dir = dirname_of(pattern);
    if (path_is_under(dir, destination)) return true;
    if (strictly_under(destination, dir) &&
        ::fnmatch(basename_of(pattern).c_str(), first_below(destination, dir).c_str(),
                  FNM_PERIOD) == 0)
      return true;
  }
  return false;
}

Status update_libraries_at_create(const RootFs& root, const LibrariesRequest& requested,
                                  const LandedMounts& mounts, ResolvedDirs& known) {
  // The hook's folders, as update_ldcache takes them.
  LibrariesRequest request = requested;
  request.folders = with_compat_first(cuda_compat_drop_in_folder(root), request.folders);
  if (request.folders.empty()) return Error{"no folders"};
  ImageBudget budget;  // its time runs from here: the whole in-process update
  // Without a cache of its own the image needs ldconfig, which runs in the hook.
  auto cache = root.open_if_exists("/etc/ld.so.cache", O_PATH);
  if (!cache) return cache.error();
  if (!*cache) return Error{"the image has no /etc/ld.so.cache"};
  if (auto ldconfig = check_ldcache_request(request.folders, request.ldconfig); !ldconfig)
    return ldconfig.error();
  // One set of resolved directories for every path read; what a write can change is forgotten
  // when folders or links had to be made before the reads (a first start's).
  auto placed = place_mounts(root, request, mounts, known);
  if (!placed) return placed.error();
  const auto& destinations = mounts.destinations;
  const auto& pending_mount = placed->pending_mount;
  // runc would create the folders for the mounts into them.
  bool wrote = false;
  for (const auto& folder : request.folders) {
    const auto there = root.known_directory(folder, known);
    if (there && *there != nullptr) continue;
    if (auto made = root.make_dirs(folder, &wrote); !made) return made.error();
  }
  if (auto s = create_symlinks(root, request.links, &wrote); !s) return s;
  if (wrote) known.forget_what_writes_change();
  const auto conf = read_ld_so_conf(root, budget);
  const auto declared = folders_to_declare(conf, request.folders);
  auto plan = plan_ldcache_update(root, conf, request.folders, declared, budget, placed->pending,
                                  &known, link_paths(request.links));
  if (!plan) return plan.error();
  auto reads = resolved_reads(root, *plan, budget, known);
  if (!reads) return reads.error();
  if (lists_musl_loader(root, known, budget))
    return Error{"the image's loader is musl's, whose search path the hook writes"};
  for (std::size_t i = 0; i < mounts.mounts.size(); ++i) {
    if (!pending_mount[i] && mount_changes_plan(destinations[i], *reads))
      return Error{"the mount at " + destinations[i] + " changes what ldconfig reads"};
  }
  if (auto s = write_loader_configuration(root, conf, declared); !s) return s;
  return apply_ldcache_plan(root, *plan);
}

}  // namespace gcr
