// File-descriptor level file access: every fd O_CLOEXEC, reads bounded and limited to
// regular files (a FIFO or device never hangs us), writes atomic (temp + fsync + rename).
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gcr {

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.release()) {}
  Fd& operator=(Fd&& other) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();

  [[nodiscard]] int get() const { return fd_; }
  [[nodiscard]] bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

// "<strerror(errno)>"
[[nodiscard]] std::string errno_text(int err);

struct DirEntry {
  std::string name;
  bool symlink = false;
};

// The entries of the directory `fd` (no "." and ".."), sorted by name, each marked when it is
// a symlink or may be one (a filesystem that reports no types, and an entry gone before its
// lstat); an error naming `path` when it cannot be read to the end or holds more than
// `max_entries`.
[[nodiscard]] Result<std::vector<DirEntry>> list_directory(Fd fd, const std::string& path,
                                                           std::size_t max_entries);

// Opens a directory (following symlinks) read-only.
[[nodiscard]] Result<Fd> open_directory(const std::string& path);

// Reads a whole regular file, refusing other file types and files over max_bytes.
// `follow` = false refuses a symlink at the last component.
[[nodiscard]] Result<std::string> read_regular_file_at(int dirfd, const std::string& name,
                                                       std::size_t max_bytes, bool follow);
[[nodiscard]] Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes);
// The same, with the file's fstat in `st` (owner and mode of what was read, not of a name).
[[nodiscard]] Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes,
                                                    struct stat& st);

// Opens for reading the file `found` (an O_PATH fd) names, once fstat shows a regular file:
// opening a device node could act on the device, a FIFO could block. `what` names it.
[[nodiscard]] Result<Fd> reopen_regular(const Fd& found, const std::string& what);
// The same, with that fstat in `st` (the file opened: it need not be asked again).
[[nodiscard]] Result<Fd> reopen_regular(const Fd& found, const std::string& what, struct stat& st);

// Reads everything from an fd (stdin of a hook), up to max_bytes.
[[nodiscard]] Result<std::string> read_fd(int fd, std::size_t max_bytes);
// The same for an fd the caller has fstat'ed (`st`): a regular file is read into one buffer of
// its size.
[[nodiscard]] Result<std::string> read_fd(int fd, std::size_t max_bytes, const struct stat& st);

// mkdir -p (0755); existing directories are fine.
[[nodiscard]] Status make_directories(const std::string& path);

// The directory `name` in the directory `dirfd`, made (0755) when missing and opened
// O_DIRECTORY|O_NOFOLLOW: a symlink there is refused, never followed. `path` names it in errors.
[[nodiscard]] Result<Fd> make_directory_at(int dirfd, const std::string& name,
                                           const std::string& path);

// Writes all of `data`, retrying short writes.
[[nodiscard]] Status write_all(int fd, std::string_view data);

struct FileOwner {
  mode_t mode = 0644;
  uid_t uid = static_cast<uid_t>(-1);  // -1: leave as created
  gid_t gid = static_cast<gid_t>(-1);
};

// ".<name>.<16 random hex digits>.tmp": a name nobody can predict.
[[nodiscard]] std::string temp_name_for(const std::string& name);

// What a crash may keep of a replaced file. A reader never sees a torn file: the new file is
// complete before the rename. kContentAndName and kContent also never leave a torn file after a
// crash: the content is on disk before the rename.
enum class Durability {
  // The new name is on disk too when the call returns (the directory is synced): files that
  // outlive us, such as engine configurations and CDI specs.
  kContentAndName,
  // The rename may be lost in a crash, leaving the old file: the bundle's config.json, rewritten
  // on every container create. Syncing the directory would cost every create a disk round trip.
  kContent,
  // Nothing is synced: a crash may leave the old file, none, or a torn one. Only for the files
  // the shim (or its hook) rewrites inside a container's rootfs before every start, its loader
  // cache, ld.so.conf.d drop-in and application profile: no torn copy can ever be used, since
  // each is rewritten before the container runs again, and the loader ignores a damaged cache.
  // The team's decision (issue 31): these files are not worth a disk round trip on every GPU
  // start. A file that already holds exactly the data, with the mode and owner asked, is left as
  // it is (a restarted container's): reading it costs a few microseconds, replacing it a
  // hundred. Where no file is (a first start's drop-in), the unnamed new file is linked at the
  // name itself, complete. Otherwise its temporary name is first one fixed name,
  // ".<name>.gpu-container-runtime.tmp", which a writer killed before the rename leaves and the
  // next write takes over (removed once a minute old, not followed; a live writer's or a folder
  // there gives way to a random name): the folder, an image's /etc, is not listed for stale
  // temporary names.
  kNone,
};

// Replaces dirfd/name with `data`: a new file in the same directory
// (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC) with the given mode and owner, fsync, renameat over
// the old name, then (kContentAndName) fsync the directory. On failure the old file is
// untouched and the temp removed.
[[nodiscard]] Status write_file_atomic_at(int dirfd, const std::string& name, std::string_view data,
                                          const FileOwner& owner,
                                          Durability durability = Durability::kContentAndName);

// Whether dirfd/name (not followed) is still the file `read` describes, the fstat of a file
// whose content was read and found to be exactly what would be written: the same inode, not
// changed since (its ctime, which no write can keep), a regular file of one name with the mode
// and owner `owner` gives a new one. Then a kNone write of that content would leave it as it is:
// it need not be read again.
[[nodiscard]] bool unchanged_since_read(int dirfd, const std::string& name, const struct stat& read,
                                        const FileOwner& owner);

}  // namespace gcr
