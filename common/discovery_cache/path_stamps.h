// What the host paths discovery consulted were when it consulted them, so that a result kept
// between calls is used only while they are unchanged. A regular file is stamped with what
// changes when it does (device, inode, type and mode, owner, links, size, mtime and ctime). A
// symlink is covered by the stamp of the directory holding it, whose mtime changes when a name
// in it is made, removed or replaced, and so is a name that was looked for and not there: such
// a directory, and one that was listed, is stamped whole too. A symlink in a sticky directory,
// where its owner decides whether it is trusted (base/trust.h), is stamped whole itself. A
// directory only passed through, to a directory or file stamped in turn, is stamped with what
// it is and who may change it (device, inode, mode, owner): names made in it beside the path
// (a pid file in /run, a temporary file in /var/tmp) change nothing discovery found.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <ctime>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace gcr {

struct PathStamp {
  std::string path;  // a host path, as the walk that met it named it
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

// The paths discovery consults, each walked part by part through its symlinks when it is
// named, before discovery reads it, and every directory and file on the way stamped (the
// first time it is met).
class ConsultedPaths {
 public:
  // A host path; `follow`: its last part's symlink too (a read or stat, not an lstat);
  // `listed`: the directory it names is listed, so its names matter.
  void host(const std::string& path, bool follow, bool listed = false);
  // A path in the tree at `root` resolved as if the tree were chroot'ed (driver/root_path.h):
  // absolute symlinks lead back into the root. The root's own host path is walked too.
  void in_root(const std::string& root, const std::string& path, bool listed = false);
  // Every stamp taken, ordered by path.
  [[nodiscard]] std::vector<PathStamp> stamps() const;

 private:
  // What a host path was when first met: lstat'ed, and a symlink's target read, once.
  struct Seen {
    bool exists = false;
    struct stat st {};
    std::optional<std::string> target;
  };
  Seen& look(const std::string& path);
  void walk(const std::string& root, const std::string& path, bool follow, bool listed);
  // A directory's names matter: a name in it was missing or a link, or it was listed.
  void whole(const std::string& dir);

  std::map<std::string, Seen> seen_;
  std::map<std::string, PathStamp> stamps_;
  std::set<std::tuple<std::string, std::string, bool, bool>> walked_;
};

}  // namespace gcr
