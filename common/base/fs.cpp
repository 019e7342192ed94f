#include "base/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <optional>

namespace gcr {

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

std::string errno_text(int err) {
  return std::strerror(err);
}

Result<Fd> open_directory(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Error{errno_text(errno) + " (" + path + ")"};
  return Fd(fd);
}

namespace {

// How many bytes read_fd first makes room for: a regular file's size and one byte to see its
// end, so it is read into one buffer; a page for anything else (a /proc file, read on every
// create, holds a few hundred bytes: a larger buffer only costs page faults), doubled as it
// fills. Never past one byte more than `max_bytes`, the most that needs reading to know a file
// is too large.
std::size_t first_read_size(const struct stat& st, std::size_t limit) {
  if (S_ISREG(st.st_mode) && st.st_size > 0)
    return std::min(static_cast<std::size_t>(st.st_size) + 1, limit);
  return std::min<std::size_t>(4096, limit);
}

// A regular file that gave the bytes its size says, short of the room it was offered, is read
// to its end: no second read to see the end. (A file of /proc or /sys says 0 or 4096 bytes,
// whatever it holds; it is read until a read gives nothing.)
bool read_whole_file(const struct stat& st, std::size_t used, std::size_t room) {
  return S_ISREG(st.st_mode) && st.st_size > 0 && used == static_cast<std::size_t>(st.st_size) &&
         used < room;
}

}  // namespace

Result<std::string> read_fd(int fd, std::size_t max_bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) st = {};  // the size unknown: read in pieces
  return read_fd(fd, max_bytes, st);
}

Result<std::string> read_fd(int fd, std::size_t max_bytes, const struct stat& st) {
  const std::size_t limit = max_bytes == SIZE_MAX ? max_bytes : max_bytes + 1;
  std::string data(first_read_size(st, limit), '\0');
  std::size_t used = 0;
  while (true) {
    if (used == data.size()) data.resize(std::min(data.size() * 2, limit));
    const ssize_t n = ::read(fd, data.data() + used, data.size() - used);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{"read failed: " + errno_text(errno)};
    }
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    if (used > max_bytes) return Error{"larger than " + std::to_string(max_bytes) + " bytes"};
    if (read_whole_file(st, used, data.size())) break;
  }
  data.resize(used);
  return data;
}

namespace {

Result<std::string> read_checked(int dirfd, const std::string& name, std::size_t max_bytes,
                                 bool follow, struct stat& st) {
  const int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (follow ? 0 : O_NOFOLLOW);
  Fd fd(::openat(dirfd, name.c_str(), flags));
  if (!fd.valid()) {
    if (errno == ELOOP && !follow) return Error{"is a symbolic link"};
    return Error{errno_text(errno)};
  }
  if (::fstat(fd.get(), &st) != 0) return Error{errno_text(errno)};
  if (!S_ISREG(st.st_mode)) return Error{"is not a regular file"};
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    return Error{"larger than " + std::to_string(max_bytes) + " bytes"};
  }
  return read_fd(fd.get(), max_bytes, st);
}

}  // namespace

Result<std::string> read_regular_file_at(int dirfd, const std::string& name, std::size_t max_bytes,
                                         bool follow) {
  struct stat st {};
  return read_checked(dirfd, name, max_bytes, follow, st);
}

Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes) {
  return read_regular_file_at(AT_FDCWD, path, max_bytes, true);
}

Result<std::string> read_regular_file(const std::string& path, std::size_t max_bytes,
                                      struct stat& st) {
  return read_checked(AT_FDCWD, path, max_bytes, true, st);
}

namespace {

// The file `found` (an O_PATH fd) names, opened for reading through its /proc/self/fd name.
Result<Fd> open_for_reading(const Fd& found, const std::string& what) {
  const std::string fd_path = "/proc/self/fd/" + std::to_string(found.get());
  Fd file(::open(fd_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  if (!file.valid()) return Error{errno_text(errno) + " (" + what + ")"};
  return file;
}

}  // namespace

Result<Fd> reopen_regular(const Fd& found, const std::string& what, struct stat& st) {
  if (::fstat(found.get(), &st) != 0) return Error{errno_text(errno) + " (" + what + ")"};
  if (!S_ISREG(st.st_mode)) return Error{"not a regular file (" + what + ")"};
  return open_for_reading(found, what);
}

Result<Fd> reopen_regular(const Fd& found, const std::string& what) {
  struct stat st {};
  return reopen_regular(found, what, st);
}

Status make_directories(const std::string& path) {
  for (std::size_t at = path.find('/', 1);; at = path.find('/', at + 1)) {
    const std::string prefix = path.substr(0, at);
    if (!prefix.empty() && ::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return Error{"cannot create " + prefix + ": " + errno_text(errno)};
    }
    if (at == std::string::npos) return {};
  }
}

Result<Fd> make_directory_at(int dirfd, const std::string& name, const std::string& path) {
  if (::mkdirat(dirfd, name.c_str(), 0755) != 0 && errno != EEXIST)
    return Error{"cannot create " + path + ": " + errno_text(errno)};
  Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.valid()) return fd;
  const int err = errno;
  struct stat st {};
  if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
    return Error{"a symlink, never followed (" + path + ")"};
  return Error{errno_text(err) + " (" + path + ")"};
}

Status write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{errno_text(errno)};
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return {};
}

std::string temp_name_for(const std::string& name) {
  unsigned char bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    const auto pid = static_cast<unsigned>(::getpid());
    std::memcpy(bytes, &pid, sizeof pid);
  }
  static const char* hex = "0123456789abcdef";
  std::string suffix;
  for (unsigned char b : bytes) {
    suffix += hex[b >> 4];
    suffix += hex[b & 0xf];
  }
  return "." + name + "." + suffix + ".tmp";
}

namespace {

Status fill_temp_file(int fd, std::string_view data, const FileOwner& owner,
                      Durability durability) {
  if (::fchmod(fd, owner.mode) != 0) return Error{"chmod: " + errno_text(errno)};
  if ((owner.uid != static_cast<uid_t>(-1) || owner.gid != static_cast<gid_t>(-1)) &&
      ::fchown(fd, owner.uid, owner.gid) != 0) {
    return Error{"chown: " + errno_text(errno)};
  }
  if (auto s = write_all(fd, data); !s) return s.error().wrap("write");
  if (durability != Durability::kNone && ::fsync(fd) != 0)
    return Error{"fsync: " + errno_text(errno)};
  return {};
}

// Entries a directory may have for remove_stale_temps to look through it: a host folder (an
// engine's configuration directory, the bundle) can be large.
constexpr std::size_t kMaxEntriesCleaned = 4096;

// Temporary files of `name` older than a minute: left by a writer that was killed between
// naming its temporary file and the rename. A live writer's is seconds old at most. In a
// directory of more than kMaxEntriesCleaned entries none is looked for.
void remove_stale_temps(int dirfd, const std::string& name) {
  auto entries = list_directory(Fd(::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)), name,
                                kMaxEntriesCleaned);
  if (!entries) return;
  const std::string prefix = "." + name + ".";
  const auto now = ::time(nullptr);
  for (const auto& e : *entries) {
    const std::string& entry = e.name;
    if (entry.size() != prefix.size() + 16 + 4 || entry.rfind(prefix, 0) != 0 ||
        !entry.ends_with(".tmp")) {
      continue;
    }
    struct stat st {};
    if (::fstatat(dirfd, entry.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        st.st_mtime + 60 < now) {
      ::unlinkat(dirfd, entry.c_str(), 0);
    }
  }
}

// Gives the unnamed file `fd` (O_TMPFILE) the name `temp` in the directory.
bool link_unnamed(int fd, int dirfd, const std::string& temp) {
  if (::linkat(fd, "", dirfd, temp.c_str(), AT_EMPTY_PATH) == 0) return true;
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  return ::linkat(AT_FDCWD, self.c_str(), dirfd, temp.c_str(), AT_SYMLINK_FOLLOW) == 0;
}

// A file rewritten in a container's rootfs before every start (kNone) first tries one fixed
// temporary name, which a writer killed before its rename leaves and the next write takes over:
// no listing of the folder (an image's /etc of 150 names cost a first start 0.1 ms) for stale
// names of random spelling.
std::string fixed_temp_name(const std::string& name) {
  return "." + name + ".gpu-container-runtime.tmp";
}

// Whether the fixed temporary name `temp` was freed: what a killed writer left there (a minute
// old, not a folder) is removed as a name, never followed. A live writer's is left to it.
bool take_over_temp(int dirfd, const std::string& temp) {
  struct stat st {};
  if (::fstatat(dirfd, temp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
  return !S_ISDIR(st.st_mode) && st.st_mtime + 60 < ::time(nullptr) &&
         ::unlinkat(dirfd, temp.c_str(), 0) == 0;
}

// The temporary file: unnamed while it is written (O_TMPFILE), so a writer killed before the
// data is complete leaves nothing; named only for the rename. Filesystems without O_TMPFILE get
// a named file from the start. kNone's fixed name, when taken and not freed, gives way to a
// random one.
Result<std::string> write_temp(int dirfd, const std::string& name, std::string_view data,
                               const FileOwner& owner, Durability durability) {
  const bool fixed = durability == Durability::kNone;
  std::string temp = fixed ? fixed_temp_name(name) : temp_name_for(name);
  const auto another_name = [&] {
    if (!fixed || errno != EEXIST) return false;
    if (!take_over_temp(dirfd, temp)) temp = temp_name_for(name);
    return true;
  };
  Fd unnamed(::openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, owner.mode));
  if (unnamed.valid()) {
    if (auto s = fill_temp_file(unnamed.get(), data, owner, durability); !s) return s.error();
    if (link_unnamed(unnamed.get(), dirfd, temp)) return temp;
    if (another_name() && link_unnamed(unnamed.get(), dirfd, temp)) return temp;
  }
  const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  Fd fd(::openat(dirfd, temp.c_str(), flags, owner.mode));
  if (!fd.valid() && another_name()) fd = Fd(::openat(dirfd, temp.c_str(), flags, owner.mode));
  if (!fd.valid()) return Error{"cannot create temporary file: " + errno_text(errno)};
  if (auto s = fill_temp_file(fd.get(), data, owner, durability); !s) {
    ::unlinkat(dirfd, temp.c_str(), 0);
    return s.error();
  }
  return temp;
}

}  // namespace

namespace {

enum class Held { kExactly, kOther, kNothing };

// A regular file of one name, of `size` bytes, with the mode and owner a new one would get.
bool as_a_new_one(const struct stat& st, std::size_t size, const FileOwner& owner) {
  return S_ISREG(st.st_mode) && st.st_nlink == 1 && static_cast<std::size_t>(st.st_size) == size &&
         (st.st_mode & 07777) == owner.mode &&
         st.st_uid == (owner.uid == static_cast<uid_t>(-1) ? ::geteuid() : owner.uid) &&
         st.st_gid == (owner.gid == static_cast<gid_t>(-1) ? ::getegid() : owner.gid);
}

// What dirfd/name holds: exactly `data` in a regular file of one name, with the mode and owner a
// new one would get; something else; or nothing at all. Looked at before it is opened: a device
// node or FIFO an image put at the name is never opened (opening a device can act on it).
Held what_is_held(int dirfd, const std::string& name, std::string_view data,
                  const FileOwner& owner) {
  Fd found(::openat(dirfd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!found.valid()) return errno == ENOENT ? Held::kNothing : Held::kOther;
  struct stat st {};
  if (::fstat(found.get(), &st) != 0 || !as_a_new_one(st, data.size(), owner)) return Held::kOther;
  auto fd = open_for_reading(found, name);
  if (!fd) return Held::kOther;
  const auto held = read_fd(fd->get(), data.size(), st);
  return held && *held == data ? Held::kExactly : Held::kOther;
}

// Where nothing is at `name`, the unnamed file, complete, is given that name itself: no
// temporary name to leave behind. Nothing when that cannot be done (no O_TMPFILE, the name
// taken meanwhile): the caller writes the usual way.
std::optional<Status> create_as_unnamed(int dirfd, const std::string& name, std::string_view data,
                                        const FileOwner& owner) {
  Fd unnamed(::openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, owner.mode));
  if (!unnamed.valid()) return std::nullopt;
  if (auto s = fill_temp_file(unnamed.get(), data, owner, Durability::kNone); !s) return s;
  if (!link_unnamed(unnamed.get(), dirfd, name)) return std::nullopt;
  return Status{};
}

}  // namespace

bool unchanged_since_read(int dirfd, const std::string& name, const struct stat& read,
                          const FileOwner& owner) {
  struct stat now {};
  return ::fstatat(dirfd, name.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0 &&
         now.st_dev == read.st_dev && now.st_ino == read.st_ino &&
         now.st_ctim.tv_sec == read.st_ctim.tv_sec && now.st_ctim.tv_nsec == read.st_ctim.tv_nsec &&
         as_a_new_one(now, static_cast<std::size_t>(read.st_size), owner);
}

Status write_file_atomic_at(int dirfd, const std::string& name, std::string_view data,
                            const FileOwner& owner, Durability durability) {
  if (durability == Durability::kNone) {
    const Held held = what_is_held(dirfd, name, data, owner);
    if (held == Held::kExactly) return {};
    if (held == Held::kNothing) {
      if (auto created = create_as_unnamed(dirfd, name, data, owner)) return *created;
    }
  }
  if (durability != Durability::kNone) remove_stale_temps(dirfd, name);
  auto temp = write_temp(dirfd, name, data, owner, durability);
  if (!temp) return temp.error();
  if (::renameat(dirfd, temp->c_str(), dirfd, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dirfd, temp->c_str(), 0);
    return Error{"rename: " + errno_text(err)};
  }
  if (durability == Durability::kContentAndName && ::fsync(dirfd) != 0)
    return Error{"fsync of directory: " + errno_text(errno)};
  return {};
}

namespace {

// One batch of getdents64 records: each entry but "." and "..", with its symlink mark (a
// filesystem that does not report types gets an lstat of the entry).
void add_entries(int dirfd, const char* records, std::size_t size, std::vector<DirEntry>& out) {
  for (std::size_t at = 0; at < size;) {
    const auto* e = reinterpret_cast<const struct dirent64*>(records + at);
    at += e->d_reclen;
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    bool symlink = e->d_type == DT_LNK;
    struct stat st {};
    // One that cannot be told is marked as a link: a reader asks it with readlink.
    if (e->d_type == DT_UNKNOWN)
      symlink = ::fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || S_ISLNK(st.st_mode);
    out.push_back(DirEntry{std::string(name), symlink});
  }
}

}  // namespace

Result<std::vector<DirEntry>> list_directory(Fd fd, const std::string& path,
                                             std::size_t max_entries) {
  std::vector<DirEntry> entries;
  alignas(struct dirent64) char records[32768];
  while (entries.size() <= max_entries) {
    const ssize_t n = ::getdents64(fd.get(), records, sizeof records);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{"cannot list " + path + ": " + errno_text(errno)};
    if (n == 0) break;
    add_entries(fd.get(), records, static_cast<std::size_t>(n), entries);
  }
  if (entries.size() > max_entries) return Error{path + " has too many entries"};
  std::sort(entries.begin(), entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
  return entries;
}

}  // namespace gcr
