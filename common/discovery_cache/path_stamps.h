// What the host paths discovery consulted were when it consulted them, so that a result kept
// between calls is used only while they are unchanged. A regular file is stamped with what
// changes when it does (device, inode, type and mode, owner, links, size, mtime and ctime). A
// symlink is covered by the stamp of the directory holding it, whose mtime changes when a name
// in it is made, removed or replaced (a symlink cannot be changed in place), and so is a name
// that was looked for and not there: such a directory, and one that was listed, is stamped
// whole too. A directory only passed through, to a directory or file stamped in turn, is
// stamped with what it is and who may change it (device, inode, mode, owner): names made in it
// beside the path (a pid file in /run, a temporary file in /var/tmp) change nothing discovery
// found.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gcr {

struct PathStamp {
  std::string path;  // a host path without symlinks
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint64_t nlink = 0;
  std::int64_t size = 0;
  timespec mtime{};
  timespec ctime{};
  // Everything above compared; else only the path, dev, ino, mode, uid and gid.
  bool whole = true;

  // Whether `now`, the stamp taken now at the same path, is still this one.
  [[nodiscard]] bool holds(const PathStamp& now) const;
};

// The stamp of `st`, lstat'ed at `path`: whole but for a directory.
[[nodiscard]] PathStamp stamp_of(const std::string& path, const struct stat& st);

// The first path that no longer lstat's to its stamp, if any.
[[nodiscard]] std::optional<std::string> changed_path(const std::vector<PathStamp>& stamps);

// The paths discovery consulted, as it named them; stamps() walks each one again, part by part,
// through its symlinks, and stamps every directory and file on the way.
class ConsultedPaths {
 public:
  // A host path; `follow`: its last part's symlink too (a read or stat, not an lstat);
  // `listed`: the directory it names was listed, so its names matter.
  void host(const std::string& path, bool follow, bool listed = false);
  // A path in the tree at `root` resolved as if the tree were chroot'ed (driver/root_path.h):
  // absolute symlinks lead back into the root. The root's own host path is walked too.
  void in_root(const std::string& root, const std::string& path);
  // The stamps of every directory and file met on the way along each path, each once.
  [[nodiscard]] std::vector<PathStamp> stamps() const;

 private:
  struct Walk {
    std::string root;  // "/" for a host path
    std::string path;
    bool follow;
    bool listed;
  };
  // What each host path was, lstat'ed (and, for a symlink, read) once for all the walks.
  struct Seen {
    bool exists = false;
    struct stat st {};
    std::optional<std::string> target;  // a symlink's, once read
  };
  using SeenPaths = std::map<std::string, Seen>;
  void walk(const Walk& w, SeenPaths& seen, std::map<std::string, PathStamp>& out) const;
  std::vector<Walk> walks_;
};

}  // namespace gcr
