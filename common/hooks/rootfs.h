// File work inside a container rootfs that the image cannot turn against the host: the root
// is opened once, paths are resolved with openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS |
// RESOLVE_NO_XDEV) (absolute symlinks and ".." stay inside the root, and no path leaves the
// rootfs' own mount for a volume, procfs or sysfs), and everything after that is done with
// *at() calls on the resulting fds. Kernels without openat2 get a component-by-component
// walk (O_PATH|O_NOFOLLOW, readlinkat, ".." clamped at the root, the root's device only).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/fs.h"
#include "base/result.h"
#include "ldcache/image_budget.h"

namespace gcr {

enum class Resolver { kAuto, kFallback };

// What RootFs::canonical learnt about one root's directories, for a pass that resolves many
// paths while nothing in that root changes (the caller's promise: cleared, or dropped, when the
// root is written): a path in a directory already seen costs one statx, and a path
// below a missing one none, where canonical(path) resolves from the root each time, one call
// per missing component more. At most kMaxDirectories are kept (open); beyond that, and for
// anything under a symlink, another mount or a name that is no directory, paths are resolved
// as canonical(path) resolves them.
class ResolvedDirs {
 public:
  static constexpr std::size_t kMaxDirectories = 64;

  struct Dir {
    enum class State { kExists, kMissing, kUnknown } state = State::kUnknown;
    Fd fd;                    // kExists: the directory, reached without a symlink
    std::string name;         // kExists, kMissing: its canonical in-root name
    std::uint64_t mount = 0;  // kExists: its mount's id
  };

  // Forgets what making directories and links in the root can change: the directories found
  // missing, those reached through a symlink or on another mount, and what directory_in opened.
  // A directory reached without a symlink stays what it was: making a name never replaces a
  // directory (a rename over one fails).
  void forget_what_writes_change() {
    std::erase_if(dirs_,
                  [](const auto& entry) { return entry.second.state != Dir::State::kExists; });
    opened_.clear();
    listings_.clear();
    link_targets_.clear();
  }

 private:
  friend class RootFs;
  // Whether the listing held of the entry's directory shows it missing or no symlink.
  [[nodiscard]] bool listed_as_no_link(const std::string& path) const;

  std::map<std::string, Dir, std::less<>> dirs_;
  // Directories RootFs::directory_in opened by resolving (invalid: missing), by the path asked.
  std::map<std::string, Fd> opened_;
  // What RootFs::listing_in listed (nothing: missing) and link_target_in read, by the path asked.
  std::map<std::string, std::optional<std::vector<DirEntry>>, std::less<>> listings_;
  // Hashed: a lookup for every library link of an image, whose paths share long prefixes.
  std::unordered_map<std::string, std::optional<std::string>> link_targets_;
};

// The entry `name` of a listing sorted by name (list_directory's), or nullptr.
[[nodiscard]] const DirEntry* find_entry(const std::vector<DirEntry>& listing,
                                         std::string_view name);

// A path's clean form ("/a/b", "/" for the root) and where each component ends in it, so that
// the directory of its first n components is a prefix of it, not a string built again.
class PathParts {
 public:
  // "." and empty components left out; ".." is an error.
  [[nodiscard]] static Result<PathParts> of(std::string_view path);
  [[nodiscard]] std::size_t size() const { return ends_.size(); }
  // The path of the first `n` components.
  [[nodiscard]] std::string_view prefix(std::size_t n) const;
  // Component `i`.
  [[nodiscard]] std::string_view part(std::size_t i) const;

 private:
  std::string clean_;
  std::vector<std::size_t> ends_;  // one past each component in clean_
};

class RootFs {
 public:
  // Opens `path` (a directory) as the root.
  [[nodiscard]] static Result<RootFs> open(const std::string& path,
                                           Resolver resolver = Resolver::kAuto);

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] int fd() const { return root_.get(); }

  // Opens the existing in-root `path` (symlinks followed inside the root) with `flags`
  // (O_CLOEXEC is always added).
  [[nodiscard]] Result<Fd> open_at(const std::string& path, int flags) const;
  // The same, with nothing (not an error) when a component does not exist.
  [[nodiscard]] Result<std::optional<Fd>> open_if_exists(const std::string& path, int flags) const;
  // Opens the existing in-root `path` as a hook sees it once runc has made the container's
  // mounts: those (its /proc, /dev, volumes) are crossed, and no symlink may be on the way.
  // Nothing when a component is missing. Kernels without openat2 open one name at a time.
  [[nodiscard]] Result<std::optional<Fd>> open_across_mounts(const std::string& path,
                                                             int flags) const;
  // Opens the in-root regular file `path` for reading, or nothing when it does not exist. It is
  // resolved with O_PATH and checked before it is opened: opening a device node the image
  // carries could act on the device. `st`, when given, receives the file's fstat.
  [[nodiscard]] Result<std::optional<Fd>> open_regular(const std::string& path,
                                                       struct stat* st = nullptr) const;

  // The root as the kernel names it (symlinks in the opened path resolved).
  [[nodiscard]] Result<std::string> host_path() const;

  // The in-root path `path` comes to once the symlinks of its existing components are followed
  // inside the root, as runc resolves a mount destination: the existing part as the kernel
  // names it, the missing rest appended. A path with ".." is an error.
  [[nodiscard]] Result<std::string> canonical(const std::string& path) const;
  // The same, answered from and adding to `known` (see ResolvedDirs).
  [[nodiscard]] Result<std::string> canonical(const std::string& path, ResolvedDirs& known) const;
  // The in-root directory `path` as `known` holds it (O_PATH, valid while `known` is neither
  // cleared nor dropped) when it is reached without a symlink on the root's mount, nullptr
  // when it is missing; nothing when `known` cannot tell, and the caller opens it.
  [[nodiscard]] std::optional<const Fd*> known_directory(const std::string& path,
                                                         ResolvedDirs& known) const;
  // The in-root directory `path` (O_PATH, symlinks followed inside the root) as `known` holds
  // it, or opened as open_if_exists opens it and kept in `known`; nullptr when it is missing.
  // Valid while `known` is neither cleared nor dropped.
  [[nodiscard]] Result<const Fd*> directory_in(const std::string& path, ResolvedDirs& known) const;
  // The in-root directory `path` opened for listing, nothing when it does not exist: from the
  // one `known` holds when it can tell, as open_if_exists opens it otherwise.
  [[nodiscard]] Result<std::optional<Fd>> open_directory(const std::string& path,
                                                         ResolvedDirs* known) const;
  // The entries of the in-root directory `path` as list_image_directory gives them (charged to
  // `budget`), listed once while `known` holds what it learnt; nullptr when it is missing.
  [[nodiscard]] Result<const std::vector<DirEntry>*> listing_in(const std::string& path,
                                                                ResolvedDirs& known,
                                                                ImageBudget& budget) const;
  // Where the in-root entry `path` links to (its directory resolved in the root, the entry not
  // followed), read once while `known` holds what it learnt; nothing when it is no symlink, is
  // missing, or links to PATH_MAX bytes or more (no lookup could follow it). A listing of its
  // directory held answers without a read when it shows the entry missing or no symlink.
  [[nodiscard]] const std::optional<std::string>& link_target_in(const std::string& path,
                                                                 ResolvedDirs& known) const;

  // Opens the in-root directory `path` for *at() calls, creating missing components (0755),
  // including the in-root targets of dangling symlinks on the way. A component that exists
  // but is not a directory (or a symlink to one) is an error. `created`, when given, is set
  // once a directory was made.
  [[nodiscard]] Result<Fd> make_dirs(const std::string& path, bool* created = nullptr) const;
  // The same as a hook sees the root once runc has made the container's mounts (its /dev, a
  // tmpfs): one name at a time from the root, no symlink followed, those mounts crossed.
  [[nodiscard]] Result<Fd> make_dirs_across_mounts(const std::string& path,
                                                   bool* created = nullptr) const;

 private:
  RootFs(Fd root, std::string path, Resolver resolver)
      : root_(std::move(root)), path_(std::move(path)), resolver_(resolver) {}
  Result<Fd> make_missing_dirs(const std::string& path, int budget, bool* created,
                               bool whole_missing) const;
  struct Depth {
    std::size_t names = 0;      // the leading names that lead to a directory
    bool next_missing = false;  // the one after them was found missing (ENOENT)
  };
  // How far `names` (the path's parts) lead to a directory, looked for from the end (from the
  // whole path's parent when `whole_missing`: the whole path gave ENOENT), with that directory
  // (the root for none) in `deepest`; from the root, not known missing, when a walk fails
  // otherwise than with ENOENT (the components are then walked one by one, whose error names
  // the part).
  Depth existing_depth(const std::vector<std::string>& names, bool whole_missing,
                       Fd& deepest) const;
  // The in-root name of `fd`, which resolving `path` opened.
  Result<std::string> name_in_root(int fd, const std::string& path) const;
  // 0 or an errno.
  int walk(const std::string& path, int flags, Fd& out) const;
  ResolvedDirs::Dir root_directory() const;
  // The directory of the first `n` of `parts` (from the root) as `known` has it, each component
  // looked up from its parent once.
  const ResolvedDirs::Dir& directory(const PathParts& parts, std::size_t n,
                                     ResolvedDirs& known) const;
  // The directory of the first `n` of `parts` when `known` has looked it up; nullptr otherwise.
  static const ResolvedDirs::Dir* looked_up(const PathParts& parts, std::size_t n,
                                            const ResolvedDirs& known);

  Fd root_;
  std::string path_;
  Resolver resolver_;
};

// Lists the image's directory open at `fd` (at most kBudgetListingEntries entries), charged to
// `budget` as one listing and its entries.
[[nodiscard]] Result<std::vector<DirEntry>> list_image_directory(Fd fd, const std::string& path,
                                                                 ImageBudget& budget);

}  // namespace gcr
