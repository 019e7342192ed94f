#include "hooks/rootfs.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <deque>
#include <vector>

#include "base/text.h"

namespace gcr {
namespace {

constexpr int kSymlinkBudget = 40;
constexpr int kEagainRetries = 32;

std::atomic<bool> openat2_missing{false};

std::string relative(const std::string& path) {
  const auto cleaned = path.find_first_not_of('/');
  return cleaned == std::string::npos ? "." : path.substr(cleaned);
}

constexpr std::uint64_t kInRoot = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;

// openat2 inside the root, on its mount unless `more_resolve` says otherwise; returns 0 or an
// errno (ENOSYS when the kernel lacks openat2).
int resolve_openat2(int root, const std::string& path, int flags, Fd& out,
                    std::uint64_t more_resolve = RESOLVE_NO_XDEV) {
  if (openat2_missing.load()) return ENOSYS;
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
  how.resolve = kInRoot | more_resolve;
  for (int attempt = 0; attempt < kEagainRetries; ++attempt) {
    const long fd = ::syscall(SYS_openat2, root, relative(path).c_str(), &how, sizeof how);
    if (fd >= 0) {
      out = Fd(static_cast<int>(fd));
      return 0;
    }
    if (errno == ENOSYS) openat2_missing = true;
    if (errno != EAGAIN) return errno;
  }
  return EAGAIN;
}

void push_front_components(std::deque<std::string>& todo, std::string_view path) {
  const auto parts = split(path, '/');
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!it->empty() && *it != ".") todo.emplace_front(*it);
  }
}

Result<std::string> read_link_at(int dir, const std::string& name) {
  char target[PATH_MAX];  // on the stack: not a page of heap filled and freed per link
  const ssize_t n = ::readlinkat(dir, name.c_str(), target, sizeof target);
  if (n < 0) return Error{errno_text(errno)};
  return std::string(target, static_cast<std::size_t>(n));
}

// The component walk for kernels without openat2: each step is openat(O_PATH|O_NOFOLLOW)
// relative to a directory fd already known to be inside the root; symlinks are read and
// their targets walked the same way (absolute ones from the root); ".." never leaves it.
int resolve_by_walk(int root, const std::string& path, int flags, Fd& out) {
  std::vector<Fd> stack;
  stack.emplace_back(::openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!stack.back().valid()) return errno;
  struct stat root_st {};
  if (::fstat(stack.back().get(), &root_st) != 0) return errno;
  std::deque<std::string> todo;
  push_front_components(todo, path);
  int budget = kSymlinkBudget;
  // The last component to open; "." after ".." or a symlink, whose target is then open.
  std::string last_name(1, '.');
  while (!todo.empty()) {
    const std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == "..") {
      if (stack.size() > 1) stack.pop_back();
      last_name.assign(1, '.');
      continue;
    }
    Fd next(::openat(stack.back().get(), part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return errno;
    struct stat st {};
    if (::fstat(next.get(), &st) != 0) return errno;
    // Another filesystem (a volume, procfs, sysfs) is not the image's: like RESOLVE_NO_XDEV.
    if (st.st_dev != root_st.st_dev) return EXDEV;
    if (S_ISLNK(st.st_mode)) {
      if (--budget < 0) return ELOOP;
      auto target = read_link_at(stack.back().get(), part);
      if (!target) return EIO;
      if (!target->empty() && target->front() == '/') stack.resize(1);
      push_front_components(todo, *target);
      last_name.assign(1, '.');
      continue;
    }
    if (!todo.empty() && !S_ISDIR(st.st_mode)) return ENOTDIR;
    if (todo.empty()) {
      last_name = part;
      break;
    }
    stack.push_back(std::move(next));
  }
  // Re-open the final component for real from its parent, never following a symlink that
  // may have been swapped in meanwhile.
  const int parent = stack.back().get();
  const int final_flags = flags | O_CLOEXEC | (last_name == "." ? 0 : O_NOFOLLOW);
  out = Fd(::openat(parent, last_name.c_str(), final_flags));
  return out.valid() ? 0 : errno;
}

// The name the kernel gives an open file.
Result<std::string> name_of(int fd) {
  return read_link_at(AT_FDCWD, "/proc/self/fd/" + std::to_string(fd));
}

}  // namespace

Result<PathParts> PathParts::of(std::string_view path) {
  PathParts parts;
  parts.clean_.reserve(path.size() + 1);
  for (auto part : split(path, '/')) {
    if (part == "..") return Error{"`..` in " + printable(path)};
    if (part.empty() || part == ".") continue;
    parts.clean_.append("/").append(part);
    parts.ends_.push_back(parts.clean_.size());
  }
  return parts;
}

std::string_view PathParts::prefix(std::size_t n) const {
  return n == 0 ? std::string_view("/") : std::string_view(clean_).substr(0, ends_[n - 1]);
}

std::string_view PathParts::part(std::size_t i) const {
  const std::size_t start = i == 0 ? 1 : ends_[i - 1] + 1;
  return std::string_view(clean_).substr(start, ends_[i] - start);
}

Result<RootFs> RootFs::open(const std::string& path, Resolver resolver) {
  Fd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid())
    return Error{"cannot open the container rootfs: " + errno_text(errno) + " (" + path + ")"};
  return RootFs(std::move(fd), path, resolver);
}

int RootFs::walk(const std::string& path, int flags, Fd& out) const {
  const int err =
      resolver_ == Resolver::kFallback ? ENOSYS : resolve_openat2(root_.get(), path, flags, out);
  return err == ENOSYS ? resolve_by_walk(root_.get(), path, flags, out) : err;
}

Result<Fd> RootFs::open_at(const std::string& path, int flags) const {
  Fd out;
  if (const int err = walk(path, flags, out); err != 0) {
    return Error{errno_text(err) + " (" + path + " in " + path_ + ")"};
  }
  return out;
}

Result<std::optional<Fd>> RootFs::open_if_exists(const std::string& path, int flags) const {
  Fd out;
  const int err = walk(path, flags, out);
  if (err == ENOENT) return std::optional<Fd>();
  if (err != 0) return Error{errno_text(err) + " (" + path + " in " + path_ + ")"};
  return std::optional<Fd>(std::move(out));
}

namespace {

// `path` opened one name at a time from `root` with O_NOFOLLOW, mounts on the way crossed: what
// openat2 with RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS does, for kernels without it. A clean path
// (no `..`) stays in the root when no symlink is followed. With `made`, a missing folder on the
// way (the last name too) is made (0755) and `*made` set.
int open_without_symlinks(int root, const std::string& path, int flags, Fd& out,
                          bool* made = nullptr) {
  auto parts = PathParts::of(path);
  if (!parts) return EINVAL;
  Fd dir(::openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  for (std::size_t i = 0; i < parts->size(); ++i) {
    const std::string name(parts->part(i));
    const bool last = i + 1 == parts->size();
    if (made != nullptr) {
      if (::mkdirat(dir.get(), name.c_str(), 0755) == 0)
        *made = true;
      else if (errno != EEXIST)
        return errno;
    }
    Fd next(::openat(dir.get(), name.c_str(),
                     (last ? flags : O_PATH | O_DIRECTORY) | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return errno;
    // O_PATH with O_NOFOLLOW opens a last symlink itself, where openat2 refuses it.
    struct stat st {};
    if (last && ::fstat(next.get(), &st) == 0 && S_ISLNK(st.st_mode)) return ELOOP;
    dir = std::move(next);
  }
  out = std::move(dir);
  return 0;
}

}  // namespace

Result<Fd> RootFs::make_dirs_across_mounts(const std::string& path, bool* created) const {
  Fd out;
  bool made = false;
  const int err = open_without_symlinks(root_.get(), path, O_PATH | O_DIRECTORY, out, &made);
  if (made && created != nullptr) *created = true;
  if (err != 0) return Error{"cannot make " + path + " in " + path_ + ": " + errno_text(err)};
  return out;
}

Result<std::optional<Fd>> RootFs::open_across_mounts(const std::string& path, int flags) const {
  Fd out;
  int err = resolve_openat2(root_.get(), path, flags, out, RESOLVE_NO_SYMLINKS);
  if (err == ENOSYS) err = open_without_symlinks(root_.get(), path, flags, out);
  if (err == ENOENT) return std::optional<Fd>();
  if (err != 0) return Error{errno_text(err) + " (" + path + " in " + path_ + ")"};
  return std::optional<Fd>(std::move(out));
}

Result<std::optional<Fd>> RootFs::open_regular(const std::string& path, struct stat* st) const {
  auto found = open_if_exists(path, O_PATH);
  if (!found || !*found) return found;
  struct stat own {};
  auto file = reopen_regular(**found, path + " in " + path_, st != nullptr ? *st : own);
  if (!file) return file.error();
  return std::optional<Fd>(std::move(*file));
}

Result<std::string> RootFs::host_path() const {
  auto name = name_of(root_.get());
  if (!name) return name.error().wrap("cannot name " + path_);
  return name;
}

Result<std::string> RootFs::canonical(const std::string& path) const {
  auto parts = PathParts::of(path);
  if (!parts) return parts.error();
  // Without a symlink on the way (the usual case) the existing part is its own name, and the
  // kernel need not be asked for it.
  bool literal = resolver_ == Resolver::kAuto;
  for (std::size_t n = parts->size() + 1; n-- > 0;) {
    const std::string at(parts->prefix(n));
    const std::string prefix = n == 0 ? "" : at;
    Fd found;
    int err = ENOSYS;
    if (literal)
      err = resolve_openat2(root_.get(), at, O_PATH, found, RESOLVE_NO_XDEV | RESOLVE_NO_SYMLINKS);
    if (err == ELOOP || err == ENOSYS) {
      literal = false;
      err = walk(at, O_PATH, found);
    }
    if (err == ENOENT) continue;
    if (err != 0) return Error{errno_text(err) + " (" + prefix + " in " + path_ + ")"};
    struct stat st {};
    if (n < parts->size()) {
      const std::string next(parts->part(n));
      if (::fstatat(found.get(), next.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
        return Error{prefix + "/" + next + " is a dangling symlink in " + path_};
    }
    auto in_root = literal ? Result<std::string>(prefix) : name_in_root(found.get(), prefix);
    if (!in_root) return in_root.error();
    for (std::size_t i = n; i < parts->size(); ++i) in_root->append("/").append(parts->part(i));
    return in_root->empty() ? std::string("/") : *in_root;
  }
  return Error{"cannot resolve " + printable(path) + " in " + path_};
}

namespace {

using Dir = ResolvedDirs::Dir;
using DirState = Dir::State;
constexpr unsigned kTypeAndMount = STATX_TYPE | STATX_MNT_ID;

// The entry `name` of the directory open at `dir`, not followed: 0 or an errno. An answer
// without the type and the mount is no answer (EOPNOTSUPP).
int entry_of(int dir, const char* name, int flags, struct statx& sx) {
  if (::statx(dir, name, flags | AT_SYMLINK_NOFOLLOW, kTypeAndMount, &sx) != 0) return errno;
  return (sx.stx_mask & kTypeAndMount) == kTypeAndMount ? 0 : EOPNOTSUPP;
}

ResolvedDirs::Dir missing(const std::string& name) {
  ResolvedDirs::Dir dir;
  dir.state = DirState::kMissing;
  dir.name = name;
  return dir;
}

ResolvedDirs::Dir existing(Fd fd, const std::string& name, std::uint64_t mount) {
  ResolvedDirs::Dir dir;
  dir.state = DirState::kExists;
  dir.fd = std::move(fd);
  dir.name = name;
  dir.mount = mount;
  return dir;
}

// `name` in `parent`: missing below a missing directory or where there is no such entry; a
// directory of the same mount, reached without a symlink (O_NOFOLLOW with O_DIRECTORY opens no
// symlink); anything else is unknown.
ResolvedDirs::Dir child_of(const ResolvedDirs::Dir& parent, const std::string& name) {
  if (parent.state == DirState::kMissing) return missing(child_path(parent.name, name));
  Fd fd(::openat(parent.fd.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return errno == ENOENT ? missing(child_path(parent.name, name)) : Dir{};
  // What was opened is of the parent's mount (no other filesystem is mounted there).
  struct statx sx {};
  if (entry_of(fd.get(), "", AT_EMPTY_PATH, sx) != 0 || !S_ISDIR(sx.stx_mode) ||
      sx.stx_mnt_id != parent.mount)
    return {};
  return existing(std::move(fd), child_path(parent.name, name), parent.mount);
}

}  // namespace

// Through openat2, as canonical(path) resolves: a kernel or a filter that refuses it leaves
// every path to canonical(path) and its walk.
ResolvedDirs::Dir RootFs::root_directory() const {
  Fd fd;
  struct statx sx {};
  if (resolve_openat2(root_.get(), "/", O_PATH | O_DIRECTORY, fd) != 0 ||
      entry_of(fd.get(), "", AT_EMPTY_PATH, sx) != 0)
    return {};
  return existing(std::move(fd), "/", sx.stx_mnt_id);
}

// Looked up before, the walk of directory() would end there: nothing is kept under an
// unknown directory.
const ResolvedDirs::Dir* RootFs::looked_up(const PathParts& parts, std::size_t n,
                                           const ResolvedDirs& known) {
  const auto it = known.dirs_.find(parts.prefix(n));
  return it == known.dirs_.end() ? nullptr : &it->second;
}

const ResolvedDirs::Dir& RootFs::directory(const PathParts& parts, std::size_t n,
                                           ResolvedDirs& known) const {
  static const ResolvedDirs::Dir unknown;
  if (const auto* seen = looked_up(parts, n, known)) return *seen;
  const ResolvedDirs::Dir* dir = nullptr;
  for (std::size_t i = 0;; ++i) {
    const std::string_view prefix = parts.prefix(i);
    auto it = known.dirs_.find(prefix);
    if (it == known.dirs_.end()) {
      if (known.dirs_.size() >= ResolvedDirs::kMaxDirectories) return unknown;
      it = known.dirs_
               .emplace(std::string(prefix), dir == nullptr
                                                 ? root_directory()
                                                 : child_of(*dir, std::string(parts.part(i - 1))))
               .first;
    }
    dir = &it->second;
    if (i == n || dir->state == DirState::kUnknown) return *dir;
  }
}

Result<std::string> RootFs::canonical(const std::string& path, ResolvedDirs& known) const {
  // A path the kernel would refuse as too long is refused by canonical(path).
  if (resolver_ != Resolver::kAuto || openat2_missing.load() || path.size() >= PATH_MAX)
    return canonical(path);
  auto parts = PathParts::of(path);
  if (!parts) return parts.error();
  if (parts->size() == 0) {
    if (directory(*parts, 0, known).state == DirState::kExists) return std::string("/");
    return canonical(path);
  }
  // A directory looked up before (as a parent, or a path of its own) answers for itself.
  if (const auto* seen = looked_up(*parts, parts->size(), known);
      seen != nullptr && seen->state != DirState::kUnknown)
    return seen->name;
  const auto& dir = directory(*parts, parts->size() - 1, known);
  const std::string leaf(parts->part(parts->size() - 1));
  const std::string name = child_path(dir.name, leaf);
  if (dir.state == DirState::kMissing) return name;
  if (dir.state == DirState::kExists) {
    // No entry, or one that is no symlink and no other mount: the path is its own name.
    struct statx sx {};
    const int err = entry_of(dir.fd.get(), leaf.c_str(), 0, sx);
    if (err == ENOENT || (err == 0 && !S_ISLNK(sx.stx_mode) && sx.stx_mnt_id == dir.mount))
      return name;
  }
  return canonical(path);
}

std::optional<const Fd*> RootFs::known_directory(const std::string& path,
                                                 ResolvedDirs& known) const {
  if (resolver_ != Resolver::kAuto || openat2_missing.load() || path.size() >= PATH_MAX)
    return std::nullopt;
  auto parts = PathParts::of(path);
  if (!parts) return std::nullopt;
  const auto& dir = directory(*parts, parts->size(), known);
  if (dir.state == DirState::kExists) return &dir.fd;
  if (dir.state == DirState::kMissing) return nullptr;
  return std::nullopt;
}

Result<const Fd*> RootFs::directory_in(const std::string& path, ResolvedDirs& known) const {
  if (const auto held = known_directory(path, known)) return *held;
  auto at = known.opened_.find(path);
  if (at == known.opened_.end()) {
    auto fd = open_if_exists(path, O_PATH | O_DIRECTORY);
    if (!fd) return fd.error();
    at = known.opened_.emplace(path, *fd ? std::move(**fd) : Fd()).first;
  }
  return at->second.valid() ? &at->second : nullptr;
}

Result<std::optional<Fd>> RootFs::open_directory(const std::string& path,
                                                 ResolvedDirs* known) const {
  const auto held = known != nullptr ? known_directory(path, *known) : std::nullopt;
  if (!held) return open_if_exists(path, O_RDONLY | O_DIRECTORY);
  if (*held == nullptr) return std::optional<Fd>();
  Fd fd(::openat((*held)->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return Error{errno_text(errno) + " (" + path + " in " + path_ + ")"};
  return std::optional<Fd>(std::move(fd));
}

Result<const std::vector<DirEntry>*> RootFs::listing_in(const std::string& path,
                                                        ResolvedDirs& known,
                                                        ImageBudget& budget) const {
  auto at = known.listings_.find(path);
  if (at == known.listings_.end()) {
    auto fd = open_directory(path, &known);
    if (!fd) return fd.error();
    std::optional<std::vector<DirEntry>> listed;
    if (*fd) {
      auto entries = list_image_directory(std::move(**fd), path, budget);
      if (!entries) return entries.error();
      listed = std::move(*entries);
    }
    at = known.listings_.emplace(path, std::move(listed)).first;
  }
  return at->second ? &*at->second : nullptr;
}

const DirEntry* find_entry(const std::vector<DirEntry>& listing, std::string_view name) {
  const auto at =
      std::lower_bound(listing.begin(), listing.end(), name,
                       [](const DirEntry& e, std::string_view n) { return e.name < n; });
  return at != listing.end() && at->name == name ? &*at : nullptr;
}

bool ResolvedDirs::listed_as_no_link(const std::string& path) const {
  // Looked up by views of the path: called for every library link of an image.
  const auto listing = listings_.find(dirname_view(path));
  if (listing == listings_.end() || !listing->second) return false;
  const DirEntry* entry =
      find_entry(*listing->second, std::string_view(path).substr(path.rfind('/') + 1));
  return entry == nullptr || !entry->symlink;
}

const std::optional<std::string>& RootFs::link_target_in(const std::string& path,
                                                         ResolvedDirs& known) const {
  if (const auto it = known.link_targets_.find(path); it != known.link_targets_.end())
    return it->second;
  std::optional<std::string> target;
  // An entry its directory's listing shows as no symlink needs no readlink.
  if (known.listed_as_no_link(path)) return known.link_targets_.emplace(path, target).first->second;
  if (auto dir = directory_in(dirname_of(path), known); dir && *dir) {
    char buf[PATH_MAX];
    const ssize_t n = ::readlinkat((*dir)->get(), basename_of(path).c_str(), buf, sizeof buf);
    if (n > 0 && static_cast<std::size_t>(n) < sizeof buf)
      target.emplace(buf, static_cast<std::size_t>(n));
  }
  return known.link_targets_.emplace(path, std::move(target)).first->second;
}

Result<std::string> RootFs::name_in_root(int fd, const std::string& path) const {
  auto root_name = host_path();
  if (!root_name) return root_name.error();
  const std::string base = *root_name == "/" ? "" : *root_name;
  auto name = name_of(fd);
  if (!name) return name.error().wrap("cannot name " + path + " in " + path_);
  if (name->compare(0, base.size(), base) != 0 ||
      (name->size() > base.size() && (*name)[base.size()] != '/'))
    return Error{path + " resolves outside " + path_};
  return name->substr(base.size());
}

Result<Fd> RootFs::make_dirs(const std::string& path, bool* created) const {
  // Usually the whole directory is there: one resolution instead of one per component.
  Fd existing;
  const int err = walk(path, O_RDONLY | O_DIRECTORY, existing);
  if (err == 0) return existing;
  return make_missing_dirs(path, kSymlinkBudget, created, err == ENOENT);
}

namespace {

// "/a/b" of the first `n` names.
std::string prefix_of(const std::vector<std::string>& names, std::size_t n) {
  std::string prefix;
  for (std::size_t i = 0; i < n; ++i) prefix += "/" + names[i];
  return prefix;
}

}  // namespace

RootFs::Depth RootFs::existing_depth(const std::vector<std::string>& names, bool whole_missing,
                                     Fd& deepest) const {
  std::size_t n = names.size() - (whole_missing && !names.empty() ? 1 : 0);
  for (;; --n) {
    Fd found;
    const int err = n == 0 ? 0 : walk(prefix_of(names, n), O_PATH | O_DIRECTORY, found);
    if (err == 0) {
      deepest = n == 0 ? Fd(::openat(root_.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC))
                       : std::move(found);
      return Depth{n, n < names.size()};
    }
    if (err != ENOENT) break;
  }
  deepest = Fd(::openat(root_.get(), ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  return Depth{0, false};
}

// Creates missing components one at a time, each with mkdirat on a directory fd already
// resolved inside the root, from the deepest directory on the way that exists. A name found
// taken is resolved in the root again (a mount there is not crossed); a dangling symlink on
// the way is followed (inside the root) and its target created, as the path's owner meant;
// the budget stops loops. `whole_missing`: resolving the whole path gave ENOENT.
Result<Fd> RootFs::make_missing_dirs(const std::string& path, int budget, bool* created,
                                     bool whole_missing) const {
  if (budget < 0) return Error{"too many levels of symbolic links (" + path + " in " + path_ + ")"};
  std::vector<std::string> names;
  for (const auto part : split(path, '/')) {
    if (!part.empty() && part != ".") names.emplace_back(part);
  }
  Fd current;
  const Depth depth = existing_depth(names, whole_missing, current);
  if (!current.valid()) return Error{errno_text(errno) + " (" + path_ + ")"};
  // Whether the directory the next name goes into was made here: empty, nothing to look at.
  bool in_made = false;
  bool readable = false;  // `current` opened for reading, not O_PATH
  for (std::size_t i = depth.names; i < names.size(); ++i) {
    const std::string& name = names[i];
    const std::string prefix = prefix_of(names, i + 1);
    const bool last = i + 1 == names.size();
    if (!in_made || name == "..") {
      Fd existing;
      const bool known_missing = depth.next_missing && i == depth.names;
      const int err = known_missing ? ENOENT : walk(prefix, O_PATH | O_DIRECTORY, existing);
      if (err == 0) {
        current = std::move(existing);
        in_made = readable = false;
        continue;
      }
      if (err != ENOENT || name == "..")
        return Error{errno_text(err) + " (" + prefix + " in " + path_ + ")"};
    }
    if (::mkdirat(current.get(), name.c_str(), 0755) == 0) {
      if (created != nullptr) *created = true;
      Fd made(::openat(current.get(), name.c_str(),
                       (last ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!made.valid())
        return Error{"cannot use " + prefix + ": " + errno_text(errno) + " (in " + path_ + ")"};
      current = std::move(made);
      in_made = true;
      readable = last;
      continue;
    }
    if (errno != EEXIST)
      return Error{"cannot create " + prefix + ": " + errno_text(errno) + " (in " + path_ + ")"};
    struct stat st {};
    if (::fstatat(current.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode)) {
      // A dangling symlink (mkdir never follows one).
      auto target = read_link_at(current.get(), name);
      if (!target) return Error{target.error().message + " (" + prefix + " in " + path_ + ")"};
      std::string rest;
      for (std::size_t j = i + 1; j < names.size(); ++j) rest += "/" + names[j];
      const std::string base =
          !target->empty() && target->front() == '/' ? "" : prefix_of(names, i) + "/";
      return make_missing_dirs(base + *target + rest, budget - 1, created, false);
    }
    // Made meanwhile, or not a directory: resolved as any existing name is.
    Fd existing;
    if (const int err = walk(prefix, O_PATH | O_DIRECTORY, existing); err != 0)
      return Error{errno_text(err) + " (" + prefix + " in " + path_ + ")"};
    current = std::move(existing);
    in_made = readable = false;
  }
  if (readable) return current;
  Fd dir(::openat(current.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return Error{errno_text(errno) + " (" + path + " in " + path_ + ")"};
  return dir;
}

Result<std::vector<DirEntry>> list_image_directory(Fd fd, const std::string& path,
                                                   ImageBudget& budget) {
  if (auto s = budget.charge(Budget::kListings, 1, path); !s) return s.error();
  auto entries = list_directory(std::move(fd), path, kBudgetListingEntries);
  if (!entries) return entries.error();
  if (auto s = budget.charge(Budget::kListedEntries, entries->size(), path); !s) return s.error();
  return entries;
}

}  // namespace gcr
