#include "hooks/ldcache_in_process.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <deque>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "base/text.h"
#include "hooks/container_hooks.h"
#include "hooks/ld_so_conf.h"
#include "ldcache/elf_library.h"
#include "ldcache/ldcache.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxLibrariesToIndex = 4096;

// Subdirectories glibc 2.36's ldconfig also scans (legacy hwcaps), which this code does not.
bool is_hwcap_subdirectory(std::string_view name) {
  static constexpr std::array<std::string_view, 11> kKnown = {
      "glibc-hwcaps", "tls",  "x86_64", "haswell", "xeon_phi", "avx512_1",
      "i386",         "i486", "i586",   "i686",    "sse2"};
  return std::find(kKnown.begin(), kKnown.end(), name) != kKnown.end();
}

// ldconfig keeps a link under its own name when that is the soname, or the soname's
// development name (libfoo.so for libfoo.so.1); it treats any other link as a library.
bool indexed_under_own_name(const std::string& link, const std::string& soname) {
  if (link == soname) return true;
  return link.size() > 3 && link.compare(link.size() - 3, 3, ".so") == 0 &&
         soname.compare(0, link.size(), link) == 0;
}

// The directory part of a cache entry's path.
std::string_view directory_of(std::string_view path) {
  return path.substr(0, path.rfind('/'));
}

// The names in a directory (no "." and ".."), sorted, or an error when it cannot be read to the
// end.
Result<std::vector<std::string>> names_in(Fd fd, const std::string& path, ImageBudget& budget) {
  auto entries = list_image_directory(std::move(fd), path, budget);
  if (!entries) return entries.error();
  std::vector<std::string> names;
  for (auto& e : *entries) names.push_back(std::move(e.name));
  return names;
}

// The directories ldconfig scans without being told, on the distributions we know: a cache
// entry elsewhere must come from the configuration.
const std::set<std::string>& trusted_dirs() {
  static const std::set<std::string> dirs{
      "/lib",   "/usr/lib",   "/lib64",  "/usr/lib64",  "/lib/x86_64-linux-gnu",
      "/lib32", "/usr/lib32", "/libx32", "/usr/libx32", "/usr/lib/x86_64-linux-gnu"};
  return dirs;
}

// Directories every host's ldconfig scans after those of its configuration, in that order
// (Debian's after its multi-arch pair, Red Hat's among /lib64 and /usr/lib64): a link made
// there is indexed wherever the host's ldconfig comes from. On merged-/usr images /lib is
// /usr/lib, which ldconfig scans by the first name.
const std::vector<std::string>& builtin_dirs() {
  static const std::vector<std::string> dirs{"/lib", "/usr/lib"};
  return dirs;
}

bool newer(const timespec& a, const timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}

// Not older: a file written in the cache's second (archives keep whole seconds, and builds
// that clamp every time to one value) may have come after it.
bool not_older(const timespec& a, const timespec& b) {
  return !newer(b, a);
}

// What ldconfig looks at in a directory: lib*.so* and ld-*.so*.
bool looks_like_library(std::string_view name) {
  return (name.rfind("lib", 0) == 0 || name.rfind("ld-", 0) == 0) &&
         name.find(".so") != std::string_view::npos;
}

// The (soname, flags) pairs a folder's entries give, which ldconfig keeps one of.
using Indexed = std::set<std::pair<std::string_view, std::int32_t>>;

struct DirId {
  dev_t dev;
  ino_t ino;
  bool operator==(const DirId& o) const { return dev == o.dev && ino == o.ino; }
  bool operator<(const DirId& o) const { return dev != o.dev ? dev < o.dev : ino < o.ino; }
};

// A library file a mount will put into a folder, read on the host: opened for reading only once
// seen to be a regular file (opening a device node can act on the device).
Result<Fd> open_host_file(const std::string& in_root, const std::string& host) {
  Fd found(::open(host.c_str(), O_PATH | O_CLOEXEC));
  if (!found.valid()) return Error{"cannot open " + host + ": " + errno_text(errno)};
  return reopen_regular(found, "the file mounted at " + in_root + ": " + host);
}

class Planner {
 public:
  Planner(const RootFs& root, const std::vector<std::string>& folders, const PendingFiles& pending,
          const std::vector<std::string>& links_made, ImageBudget& budget, ResolvedDirs* known)
      : root_(root),
        folders_(folders),
        pending_(pending),
        links_made_(links_made),
        budget_(budget),
        known_(known != nullptr ? *known : own_) {}

  Result<LdcachePlan> run(const Result<LdSoConf>& conf, const std::vector<std::string>& declared) {
    if (auto s = read_cache(); !s) return s.error();
    if (!conf) return conf.error().wrap("ld.so.conf");
    if (auto s = check_configuration(*conf, declared); !s) return s.error();
    std::set<std::string> known(conf->directories.begin(), conf->directories.end());
    known.insert(trusted_dirs().begin(), trusted_dirs().end());
    known.insert(folders_.begin(), folders_.end());
    for (const auto& folder : folders_) {
      if (auto s = check_fresh(folder); !s) return s.error();
    }
    for (const auto& dir : known) {
      if (auto s = check_fresh(dir); !s) return s.error();
    }
    name_scanned_dirs(conf->directories);
    if (auto s = find_links_made(); !s) return s.error();
    scan_where_links_were_made();
    std::vector<std::vector<LdCacheRef>> per_folder(folders_.size());
    std::vector<LdCacheRef> others;
    if (auto s = split_entries(known, per_folder, others); !s) return s.error();
    LdcachePlan plan;
    for (std::size_t i = 0; i < folders_.size(); ++i) {
      if (auto s = scan_folder(folders_[i], per_folder[i], plan.links); !s) return s.error();
    }
    const auto in_folders = std::move(dangling_);
    dangling_.clear();
    if (auto s = check_changed(others, plan.links); !s) return s.error();
    const auto again = second_run_indexes(in_folders, plan.links);
    if (!again) return again.error();
    // A link passed by in a directory that is no folder: where the request made it, the hook
    // runs ldconfig again once a folder's soname link ends its way.
    for (const auto& [dir, name] : dangling_) {
      if (*again || made_by_request(dir, name))
        return Error{dir + "/" + name + ": a link ldconfig's second run may index"};
    }
    if (*again) {
      if (auto s = index_through_soname_links(in_folders, per_folder, plan.links); !s)
        return s.error();
    }
    std::vector<LdCacheRef> merged;
    for (const auto& entries : per_folder)
      merged.insert(merged.end(), entries.begin(), entries.end());
    merged.insert(merged.end(), others.begin(), others.end());
    sort_ld_cache(merged);
    plan.cache = write_ld_cache(merged);
    if (plan.cache == cache_data_) plan.cache_as_read = cache_stat_;
    plan.files_read = {"/etc/ld.so.cache", "/etc/ld.so.conf"};
    std::copy_if(conf->files.begin(), conf->files.end(), std::back_inserter(plan.files_read),
                 [](const std::string& file) { return file != "/etc/ld.so.conf"; });
    plan.directories_scanned.assign(known.begin(), known.end());
    plan.includes = conf->includes;
    plan.includes.push_back("/etc/ld.so.conf.d/*.conf");
    return plan;
  }

 private:
  // The image's cache, read once and kept: the entries are views of it.
  Status read_cache() {
    constexpr std::string_view kCache = "/etc/ld.so.cache";
    struct stat st {};
    auto fd = root_.open_regular(std::string(kCache), &st);
    if (!fd) return fd.error();
    if (!*fd) return Error{"the image has no /etc/ld.so.cache"};
    cache_stat_ = st;
    if (auto s = budget_.charge(Budget::kCacheBytes, static_cast<std::size_t>(st.st_size), kCache);
        !s)
      return s;
    auto data = read_fd((*fd)->get(), kBudgetCacheBytes, st);
    if (!data) return data.error();
    cache_data_ = std::move(*data);
    auto cache = read_ld_cache(cache_data_, budget_, kCache);
    if (!cache) return cache.error();
    const auto& entries = cache->entries;
    if (!std::all_of(entries.begin(), entries.end(),
                     [](const LdCacheRef& e) { return loader_orders(e.soname); }))
      return unordered("a soname", kCache);
    if (cache->old_section) return Error{"/etc/ld.so.cache has the old format's section"};
    for (const auto& e : entries) {
      if (e.hwcap != 0 || e.osversion != 0)
        return Error{"/etc/ld.so.cache has hwcap or OS version entries"};
      if (e.path.size() < 2 || e.path.front() != '/')
        return Error{"/etc/ld.so.cache has a relative path"};
    }
    entries_ = std::move(cache->entries);
    return {};
  }

  // A name the loader's comparison cannot place: the order written would not be the one its
  // binary search assumes.
  static Error unordered(std::string_view what, std::string_view file) {
    return Error{std::string(what) + " with a digit run above 2147483647, which the loader " +
                 "cannot order (" + std::string(file) + ")"};
  }

  // Every configuration file is as old as the cache, but the drop-in about to be written; an
  // image without ld.so.conf has no other drop-ins the new include would start reading.
  Status check_configuration(const LdSoConf& conf, const std::vector<std::string>& declared) {
    const std::string ours = kLdConfigDropInPath;
    const bool writing = !declared.empty();
    if (writing) {
      if (auto s = check_drop_in(conf, ours, declared); !s) return s;
    }
    for (std::size_t i = 0; i < conf.files.size(); ++i) {
      if ((!writing || conf.files[i] != ours) &&
          not_older(conf.file_stats[i].st_mtim, cache_stat_.st_mtim))
        return Error{conf.files[i] + " is newer than /etc/ld.so.cache"};
    }
    if (!conf.exists) {
      auto dir = root_.open_if_exists("/etc/ld.so.conf.d", O_RDONLY | O_DIRECTORY);
      if (!dir) return dir.error();
      if (*dir) {
        auto names = names_in(std::move(**dir), "/etc/ld.so.conf.d", budget_);
        if (!names) return names.error();
        for (const auto& name : *names) {
          if (name.size() > 5 && name.compare(name.size() - 5, 5, ".conf") == 0 &&
              name != kLdConfigDropIn && name[0] != '.')
            return Error{"drop-ins without /etc/ld.so.conf"};
        }
      }
    }
    return {};
  }

  // The drop-in there is ours with these folders, or none: as the configuration read it when
  // it was among the files read.
  Status check_drop_in(const LdSoConf& conf, const std::string& ours,
                       const std::vector<std::string>& declared) {
    const auto read = std::find(conf.files.begin(), conf.files.end(), ours);
    std::optional<std::string> text;
    if (read != conf.files.end()) {
      text = conf.texts[static_cast<std::size_t>(read - conf.files.begin())];
    } else {
      auto existing = root_.open_regular(ours);
      if (!existing) return existing.error();
      if (!*existing) return {};
      auto held = read_fd((*existing)->get(), 1 << 20);
      if (held) text = std::move(*held);
    }
    if (!text || *text != drop_in_content(declared))
      return Error{"the drop-in names other folders"};
    return {};
  }

  // A directory ldconfig scans that changed after the cache is noted: scanned below, it may
  // only hold what the cache indexes. The folders are scanned below in any case.
  Status check_fresh(const std::string& dir) {
    if (ids_.count(dir)) return {};  // a folder, looked at first
    auto fd = directory(dir);
    if (!fd) return fd.error();
    if (!*fd) return {};
    struct stat st {};
    if (::fstat((*fd)->get(), &st) != 0) return Error{"cannot stat " + dir};
    ids_[dir] = DirId{st.st_dev, st.st_ino};
    if (!is_folder(ids_[dir]) && not_older(st.st_mtim, cache_stat_.st_mtim)) changed_.insert(dir);
    return {};
  }

  // The name ldconfig scans each directory by: the first it meets, the folders (its command
  // line) first, then its configuration's and its own. A directory it does not scan has none.
  void name_scanned_dirs(const std::vector<std::string>& configured) {
    for (const auto* dirs : {&folders_, &configured, &builtin_dirs()}) {
      for (const auto& dir : *dirs) {
        if (const auto id = ids_.find(dir); id != ids_.end()) scanned_as_.emplace(id->second, dir);
      }
    }
  }

  // The links the request made, by directory and name: ldconfig indexes them where it scans
  // their directory, changed by them after the cache.
  Status find_links_made() {
    for (const auto& link : links_made_) {
      auto dir = directory(dirname_of(link));
      if (!dir) return dir.error();
      struct stat st {};
      if (!*dir || ::fstat((*dir)->get(), &st) != 0) continue;
      made_.emplace(DirId{st.st_dev, st.st_ino}, basename_of(link));
    }
    return {};
  }

  // A directory that is no folder holding a link the request made is checked as one changed
  // since the cache, whatever its time says (an image's cache may claim a later one).
  void scan_where_links_were_made() {
    for (const auto& [dir, id] : ids_) {
      if (is_folder(id)) continue;
      const DirId here = id;
      if (std::any_of(made_.begin(), made_.end(), [&](const auto& m) { return m.first == here; }))
        changed_.insert(dir);
    }
  }

  // The folders were looked at first: a directory that is one of them is scanned below.
  bool is_folder(const DirId& id) const {
    return std::any_of(folders_.begin(), folders_.end(), [&](const std::string& f) {
      const auto it = ids_.find(f);
      return it != ids_.end() && it->second == id;
    });
  }

  // The cache's entries by folder (a directory that is a folder under another name, as /lib
  // is /usr/lib on merged-/usr images, is that folder: ldconfig scans it once, by the name
  // first given) and the rest, each in cache order.
  Status split_entries(const std::set<std::string>& known,
                       std::vector<std::vector<LdCacheRef>>& per_folder,
                       std::vector<LdCacheRef>& others) {
    for (auto& e : entries_) {
      const std::string dir(directory_of(e.path));
      if (dir.empty() || !known.count(dir)) return Error{"a cache entry outside " + dir};
      const auto id = ids_.find(dir);
      if (id == ids_.end()) return Error{"a cache entry in a missing directory " + dir};
      std::size_t i = 0;
      while (i < folders_.size() && !(ids_.count(folders_[i]) && ids_[folders_[i]] == id->second))
        ++i;
      if (i == folders_.size()) {
        others.push_back(e);
        continue;
      }
      if (dir != folders_[i]) e.path = own(folders_[i] + std::string(e.path.substr(dir.size())));
      per_folder[i].push_back(e);
    }
    return {};
  }

  // The directories scanned that changed after the cache, each with its entries: they may only
  // hold what the cache indexes, and the links the request made there, which join `others`.
  Status check_changed(std::vector<LdCacheRef>& others, std::vector<std::string>& links) {
    std::map<std::string, std::vector<LdCacheRef>, std::less<>> by_directory;
    for (const auto& dir : changed_) by_directory[dir];
    for (const auto& e : others) {
      if (const auto it = by_directory.find(directory_of(e.path)); it != by_directory.end())
        it->second.push_back(e);
    }
    checking_changed_ = true;
    for (auto& [dir, in_dir] : by_directory) {
      // ldconfig scans a directory once, by its first name (/lib for /usr/lib on merged /usr).
      const std::string* name = scanned_as(dir);
      if (in_dir.empty() && name != nullptr && *name != dir) continue;
      const std::size_t before = in_dir.size();
      if (auto s = scan_folder(dir, in_dir, links); !s) return s;
      for (std::size_t i = before; i < in_dir.size(); ++i) {
        if (auto s = check_placed_last(in_dir[i], others); !s) return s;
        others.push_back(in_dir[i]);
      }
    }
    checking_changed_ = false;
    return {};
  }

  // An entry added in a directory that is no folder goes after the folders' entries and the
  // cache's: exact only when no other directory that is no folder has one of its soname (their
  // order would be ldconfig's order of directories).
  static Status check_placed_last(const LdCacheRef& added, const std::vector<LdCacheRef>& others) {
    for (const auto& e : others) {
      if (e.soname == added.soname && e.flags == added.flags)
        return Error{std::string(added.path) + ": another " + std::string(added.soname) + " in " +
                     std::string(directory_of(e.path))};
    }
    return {};
  }

  // The name ldconfig scans `dir` by; nothing when it does not scan it.
  const std::string* scanned_as(const std::string& dir) const {
    const auto id = ids_.find(dir);
    if (id == ids_.end()) return nullptr;
    const auto as = scanned_as_.find(id->second);
    return as != scanned_as_.end() ? &as->second : nullptr;
  }

  // Whether a library may be indexed in `dir` now: always in a folder; in a directory that
  // changed after the cache, only a link the request made, where ldconfig scans that directory
  // by this name.
  bool may_add(const std::string& dir, const std::string& name) const {
    if (!checking_changed_) return true;
    const std::string* as = scanned_as(dir);
    return as != nullptr && *as == dir && made_.count({ids_.at(dir), name}) != 0;
  }

  // The folder's libraries the cache does not account for (not a cached name, nor the target
  // of one), indexed as ldconfig would: a library gets its soname link and an entry under its
  // soname, a link an entry under its own name.
  Status scan_folder(const std::string& folder, std::vector<LdCacheRef>& entries,
                     std::vector<std::string>& links) {
    auto listed = root_.listing_in(folder, known_, budget_);
    if (!listed) return listed.error();
    if (!*listed) return Error{errno_text(ENOENT) + " (" + folder + " in " + root_.path() + ")"};
    auto view = folder_view(folder, **listed);
    if (!view) return view.error();
    std::set<std::string_view> accounted;
    Indexed indexed;
    for (const auto& e : entries) {
      const std::string_view name = e.path.substr(folder.size() + 1);
      accounted.insert(name);
      indexed.insert({e.soname, e.flags});
      if (auto s = account_entry(*view, name, accounted); !s) return s;
    }
    // Views of the listing's names and the pending ones: a folder of an image holds hundreds.
    std::vector<std::string_view> all;
    all.reserve((*listed)->size() + view->pending.size());
    for (const auto& e : **listed) all.push_back(e.name);
    all.insert(all.end(), view->pending.begin(), view->pending.end());
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    std::vector<std::string> names;
    for (const auto name : all) {
      if (is_hwcap_subdirectory(name))
        return Error{child_path(folder, name) + ": hwcap subdirectories"};
      if (name.find(".#prelink#.") != std::string_view::npos) continue;  // ldconfig passes them by
      if (looks_like_library(name) && !accounted.count(name)) names.emplace_back(name);
    }
    if (names.size() > kMaxLibrariesToIndex) return Error{folder + ": too many libraries to index"};
    for (const auto& name : names) {
      if (auto s = index_one(folder, name, entries, indexed, links); !s) return s;
    }
    return {};
  }

  // ldconfig makes its soname links after reading a folder: its first run passes by a link to
  // one of them (libcuda.so -> libcuda.so.1, made beside libcuda.so.<version>), which its second
  // run indexes. The hook runs it again when a link the request made led nowhere
  // (update_ldcache), so the cache written is then the second run's: libcuda.so is in it from
  // a container's first start, as in a restarted one's. Whether a link the request made, among
  // the links the folders' scan passed by, leads to a soname link the plan makes beside it; one
  // that leads out of its folder is left to ldconfig (a link made there may end its way).
  Result<bool> second_run_indexes(const std::vector<std::pair<std::string, std::string>>& passed_by,
                                  const std::vector<std::string>& links) {
    bool again = false;
    for (const auto& [folder, name] : passed_by) {
      if (!made_by_request(folder, name)) continue;
      const auto file = file_through_soname_link(folder, name, links);
      if (!file) return file.error();
      again = again || file->has_value();
    }
    return again;
  }

  // The file named by the soname link the plan makes where the link folder/name leads, when it
  // leads to one beside it; an error when it leads out of the folder.
  Result<std::optional<std::string>> file_through_soname_link(
      const std::string& folder, const std::string& name, const std::vector<std::string>& links) {
    const std::string path = folder + "/" + name;
    const auto& target = link_target(path);
    if (!target) return std::optional<std::string>();
    if (!is_plain_name(*target)) return Error{path + " leads elsewhere, where ldconfig may link"};
    return soname_link_made_at(links, folder + "/" + *target);
  }

  // Whether the request made the link `name` in the directory `dir` (looked at already).
  bool made_by_request(const std::string& dir, const std::string& name) const {
    const auto id = ids_.find(dir);
    return id != ids_.end() && made_.count({id->second, name}) != 0;
  }

  // What ldconfig's second run adds: each link the folders' scan passed by that leads to a
  // soname link the plan makes beside it, under its own name. One that leads elsewhere, or that
  // ldconfig would take for another library of that soname, is left to ldconfig.
  Status index_through_soname_links(
      const std::vector<std::pair<std::string, std::string>>& passed_by,
      std::vector<std::vector<LdCacheRef>>& per_folder, const std::vector<std::string>& links) {
    for (const auto& [folder, name] : passed_by) {
      const std::size_t i = static_cast<std::size_t>(
          std::find(folders_.begin(), folders_.end(), folder) - folders_.begin());
      if (i == folders_.size()) return Error{"a link outside the folders: " + folder + "/" + name};
      if (auto s = index_through_soname_link(folder, name, per_folder[i], links); !s) return s;
    }
    return {};
  }

  Status index_through_soname_link(const std::string& folder, const std::string& name,
                                   std::vector<LdCacheRef>& entries,
                                   const std::vector<std::string>& links) {
    const std::string path = folder + "/" + name;
    const auto through = file_through_soname_link(folder, name, links);
    if (!through) return through.error();
    if (!*through) return {};
    const std::string& file = **through;
    auto dir = directory(folder);
    if (!dir) return dir.error();
    if (!*dir) return Error{"cannot open " + folder};
    bool file_is_link = false;
    auto read = library_at((*dir)->get(), folder, file, file_is_link);
    if (!read) return read.error();
    if (!*read) return {};
    const auto& lib = *read;
    const std::string soname = lib->soname ? *lib->soname : file;
    if (!indexed_under_own_name(name, soname) || !loader_orders(name))
      return Error{path + " leads to " + folder + "/" + soname + ", which ldconfig makes"};
    if (std::any_of(entries.begin(), entries.end(),
                    [&](const LdCacheRef& e) { return e.soname == name && e.flags == lib->flags; }))
      return Error{path + ": another " + name};
    const std::string_view key = own(name);
    entries.push_back(LdCacheRef{key, own(path), ld_cache_arch(lib->flags), lib->flags, 0});
    return {};
  }

  // The file the soname link the plan makes at `path` names: links hold "<file>::<path>".
  static std::optional<std::string> soname_link_made_at(const std::vector<std::string>& links,
                                                        const std::string& path) {
    for (const auto& link : links) {
      const std::size_t sep = link.find("::");
      if (sep != std::string::npos && link.compare(sep + 2, std::string::npos, path) == 0)
        return link.substr(0, sep);
    }
    return std::nullopt;
  }

  // A folder as its cached entries are checked: its listing, the names of the files to be
  // mounted into it (sorted), its directory and the mount that directory is on.
  struct FolderView {
    const std::string& path;
    const std::vector<DirEntry>& listing;
    std::vector<std::string> pending;
    int fd = -1;
    std::optional<std::uint64_t> mount;

    [[nodiscard]] bool is_pending(std::string_view name) const {
      return std::binary_search(pending.begin(), pending.end(), name);
    }
  };

  Result<FolderView> folder_view(const std::string& folder, const std::vector<DirEntry>& listing) {
    FolderView view{folder, listing, pending_names(folder), -1, std::nullopt};
    auto dir = directory(folder);
    if (!dir) return dir.error();
    if (*dir == nullptr) return Error{errno_text(ENOENT) + " (" + folder + ")"};
    view.fd = (*dir)->get();
    struct statx sx {};
    if (::statx(view.fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID))
      view.mount = sx.stx_mnt_id;
    return view;
  }

  // A cache entry of the folder: the file it leads to is still there, and what it links to
  // is accounted for. An entry mounted over is a file, not the image's link. Most entries are
  // a soname link to a file beside it, which the folder's listing shows: one readlink and one
  // stat, by name; any other goes the general way.
  Status account_entry(const FolderView& folder, std::string_view name,
                       std::set<std::string_view>& accounted) {
    if (folder.is_pending(name)) return {};
    const DirEntry* entry = find_entry(folder.listing, name);
    if (entry != nullptr && !entry->symlink) return check_file_beside(folder, name);
    const std::string path = child_path(folder.path, name);
    if (entry != nullptr) {
      const auto& target = link_target(path);
      if (target && is_plain_name(*target)) {
        accounted.insert(*target);
        if (folder.is_pending(*target)) return {};
        const DirEntry* file = find_entry(folder.listing, *target);
        if (file != nullptr && !file->symlink) return check_file_beside(folder, *target);
      }
    }
    if (!pending_behind(path)) {
      if (auto s = check_still_there(path); !s) return s;
    }
    if (const auto& to = link_target(path)) accounted.insert(*to);
    return {};
  }

  static bool is_plain_name(const std::string& target) {
    return !target.empty() && target.find('/') == std::string::npos && target != "." &&
           target != "..";
  }

  // The file `name` of the folder, listed as no symlink, is not the empty file runc leaves of a
  // mount no longer made (a library an older driver had), whose entry ldconfig would drop. A
  // file mounted there (inside runc, as the hook runs) goes the general way, which refuses to
  // cross a mount.
  // Called for every library of the folder the cache holds: the name is copied to the stack,
  // and its path made only where it is needed.
  Status check_file_beside(const FolderView& folder, std::string_view name) {
    char at[NAME_MAX + 1];
    const bool fits = name.size() < sizeof at;
    if (fits) *std::copy(name.begin(), name.end(), at) = '\0';
    struct statx file {};
    const unsigned want = STATX_TYPE | STATX_SIZE | STATX_MNT_ID;
    if (!folder.mount || !fits || ::statx(folder.fd, at, AT_SYMLINK_NOFOLLOW, want, &file) != 0 ||
        (file.stx_mask & STATX_MNT_ID) == 0 || file.stx_mnt_id != *folder.mount)
      return check_still_there(child_path(folder.path, name));
    if (S_ISREG(file.stx_mode) && file.stx_size == 0)
      return Error{child_path(folder.path, name) + " is in the cache but empty"};
    return {};
  }

  // The cache's entry `path` is still there, links followed inside the root, and not empty.
  Status check_still_there(const std::string& path) {
    auto present = root_.open_if_exists(path, O_PATH);
    if (!present) return present.error();
    if (!*present) return Error{path + " is in the cache but gone"};
    struct stat st {};
    if (::fstat((*present)->get(), &st) != 0) return Error{"cannot stat " + path};
    return check_not_empty(path, st);
  }

  static Status check_not_empty(const std::string& path, const struct stat& st) {
    if (S_ISREG(st.st_mode) && st.st_size == 0) return Error{path + " is in the cache but empty"};
    return {};
  }

  // A link that leads to no library (it may dangle) is passed by, as ldconfig does, and noted
  // in dangling_.
  Status index_one(const std::string& folder, const std::string& name,
                   std::vector<LdCacheRef>& entries, Indexed& indexed,
                   std::vector<std::string>& links) {
    const std::string path = folder + "/" + name;
    auto dir = directory(folder);
    if (!dir) return dir.error();
    if (!*dir) return Error{"cannot open " + folder};
    bool is_link = false;
    auto read = library_at((*dir)->get(), folder, name, is_link);
    if (!read) return read.error();
    if (!*read) {  // not a file, a dangling link, not ELF: ldconfig passes it by
      if (is_link) dangling_.push_back({folder, name});
      return {};
    }
    const auto& lib = *read;
    // A library without a soname ldconfig indexes under the name it found it by.
    const std::string soname = lib->soname ? *lib->soname : name;
    if (!may_add(folder, name))
      return Error{folder + " changed after /etc/ld.so.cache (" + name + ")"};
    if (!loader_orders(soname)) return unordered("the soname of " + path, path);
    if (is_link && !indexed_under_own_name(name, soname)) {
      // ldconfig takes such a link for a library file of that name and soname, and of the
      // libraries of one soname in a folder keeps the one whose name it orders last: the link's
      // own target, beside it, when that orders after it (libGLX_indirect.so.0 ->
      // libGLX_nvidia.so.580). A link to a library elsewhere (Debian's nvidia/current) gets its
      // soname link and entry as a file does.
      if (outranked_by_target(folder, name)) return {};
      is_link = false;
    }
    if (is_link) {
      // ldconfig indexes such a link under its own name (libfoo.so -> libfoo.so.1: libfoo.so).
      if (!loader_orders(name)) return unordered("the name " + name, path);
      const std::string_view key = own(name);
      if (!indexed.insert({key, lib->flags}).second) return Error{path + ": another " + name};
      entries.push_back(LdCacheRef{key, own(path), ld_cache_arch(lib->flags), lib->flags, 0});
      return {};
    }
    if (indexed.count({soname, lib->flags})) return Error{path + ": another " + soname};
    if (soname != name) {
      struct stat existing {};
      if (::fstatat((*dir)->get(), soname.c_str(), &existing, AT_SYMLINK_NOFOLLOW) == 0 ||
          pending_.count(folder + "/" + soname))
        return Error{folder + "/" + soname + " exists and is not the cache's"};
      links.push_back(name + "::" + folder + "/" + soname);
    }
    const std::string_view key = own(soname);
    indexed.insert({key, lib->flags});
    entries.push_back(
        LdCacheRef{key, own(folder + "/" + soname), ld_cache_arch(lib->flags), lib->flags, 0});
    return {};
  }

  // Whether the link folder/name leads to a library file beside it (or one to be mounted
  // there) whose name ldconfig orders after the link's: of the two, ldconfig keeps that file.
  bool outranked_by_target(const std::string& folder, const std::string& name) {
    const auto& target = link_target(folder + "/" + name);
    if (!target || target->empty() || target->find('/') != std::string::npos ||
        !looks_like_library(*target) || !loader_orders(*target) ||
        compare_sonames(*target, name) <= 0)
      return false;
    if (pending_.count(folder + "/" + *target)) return true;
    auto dir = directory(folder);
    struct stat st {};
    return dir && *dir &&
           ::fstatat((*dir)->get(), target->c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
           S_ISREG(st.st_mode);
  }

  // The names of the pending files of `folder`, sorted.
  std::vector<std::string> pending_names(const std::string& folder) const {
    std::vector<std::string> names;
    const std::string prefix = folder + "/";
    for (auto it = pending_.lower_bound(prefix);
         it != pending_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
      std::string name = it->first.substr(prefix.size());
      if (name.find('/') == std::string::npos) names.push_back(std::move(name));
    }
    return names;
  }

  // The library at folder/name as ldconfig reads it: a file to be mounted there, or a link to
  // one, that discovery read is not read again. Nothing for what ldconfig passes by.
  Result<std::optional<ElfLibrary>> library_at(int dir, const std::string& folder,
                                               const std::string& name, bool& is_link) {
    const std::string path = folder + "/" + name;
    is_link = false;
    if (!pending_.count(path)) {
      struct stat st {};
      if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return Error{"cannot stat " + path};
      is_link = S_ISLNK(st.st_mode);
      if (!is_link && !S_ISREG(st.st_mode)) return std::optional<ElfLibrary>();
    }
    if (const auto mounted = pending_behind(path)) {
      const PendingFile& file = pending_.at(*mounted);
      if (file.elf) return std::optional<ElfLibrary>(*file.elf);
      auto fd = open_host_file(*mounted, file.host);
      if (!fd) return fd.error();
      return read_library(*fd, path);
    }
    auto fd = root_.open_regular(path);
    if (!fd) return fd.error();
    if (!*fd) return std::optional<ElfLibrary>();
    return read_library(**fd, path);
  }

  // The soname and flags of the file open at `fd`; nothing when it is no ELF library.
  Result<std::optional<ElfLibrary>> read_library(const Fd& fd, const std::string& path) {
    auto lib = read_elf_library(fd.get(), budget_, path);
    if (!lib && lib.error().kind == ErrorKind::kNotElf) return std::optional<ElfLibrary>();
    // A budget's error names the file already.
    if (!lib) return budget_.exceeded() ? lib.error() : lib.error().wrap(path);
    return std::optional<ElfLibrary>(std::move(*lib));
  }

  // The pending file `path` is, or leads to through the image's symlinks (followed by name).
  std::optional<std::string> pending_behind(const std::string& path) {
    std::string at = path;
    for (int hops = 0; !pending_.empty() && hops < 8; ++hops) {
      if (pending_.count(at)) return at;
      const auto& to = link_target(at);
      if (!to) return std::nullopt;
      at = clean_path(to->front() == '/' ? *to : dirname_of(at) + "/" + *to);
    }
    return std::nullopt;
  }

  // An image directory, opened once per plan (planning writes nothing); nothing when it is
  // missing.
  Result<const Fd*> directory(const std::string& dir) { return root_.directory_in(dir, known_); }

  // Where the image's entry `path` links to, read once; nothing when it is no symlink.
  const std::optional<std::string>& link_target(const std::string& path) {
    return root_.link_target_in(path, known_);
  }

  // A string the plan's entries view, kept for as long as the plan is made.
  std::string_view own(std::string s) { return owned_.emplace_back(std::move(s)); }

  const RootFs& root_;
  const std::vector<std::string>& folders_;
  const PendingFiles& pending_;
  const std::vector<std::string>& links_made_;
  ImageBudget& budget_;
  struct stat cache_stat_ {};      // the image's /etc/ld.so.cache when it was read
  std::string cache_data_;         // the image's /etc/ld.so.cache
  std::deque<std::string> owned_;  // names the entries view that the cache does not hold
  std::vector<LdCacheRef> entries_;
  ResolvedDirs own_;     // when the caller has none
  ResolvedDirs& known_;  // the directories looked up (the caller's, kept by it)
  std::map<std::string, DirId> ids_;
  std::set<std::string> changed_;                 // scanned directories newer than the cache
  std::map<DirId, std::string> scanned_as_;       // ldconfig's name of each directory it scans
  std::set<std::pair<DirId, std::string>> made_;  // the links the request made
  bool checking_changed_ = false;                 // scanning a directory that is no folder
  // The links a scan passed by that lead to no library, (directory, name): a second ldconfig
  // run may index them.
  std::vector<std::pair<std::string, std::string>> dangling_;
};

}  // namespace

Result<LdcachePlan> plan_ldcache_update(const RootFs& root, const Result<LdSoConf>& conf,
                                        const std::vector<std::string>& folders,
                                        const std::vector<std::string>& declared,
                                        ImageBudget& budget, const PendingFiles& pending,
                                        ResolvedDirs* known,
                                        const std::vector<std::string>& links_made) {
  return Planner(root, folders, pending, links_made, budget, known).run(conf, declared);
}

bool ldconfig_reads_entry(std::string_view name) {
  return looks_like_library(name) || is_hwcap_subdirectory(name);
}

Status apply_ldcache_plan(const RootFs& root, const LdcachePlan& plan) {
  if (auto s = create_symlinks(root, plan.links); !s) return s;
  auto etc = root.make_dirs("/etc");
  if (!etc) return etc.error();
  if (plan.cache_as_read &&
      unchanged_since_read(etc->get(), "ld.so.cache", *plan.cache_as_read, FileOwner{}))
    return {};
  if (auto s = write_file_atomic_at(etc->get(), "ld.so.cache", plan.cache, FileOwner{},
                                    Durability::kNone);  // rewritten before every start
      !s) {
    return s.error().wrap("cannot write /etc/ld.so.cache");
  }
  return {};
}

}  // namespace gcr
