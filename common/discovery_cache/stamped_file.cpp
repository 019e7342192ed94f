#include "discovery_cache/stamped_file.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <optional>

#include "base/fs.h"
#include "base/text.h"
#include "base/trust.h"
#include "discovery_cache/fields.h"

namespace gcr {
namespace {

constexpr std::string_view kMagic = "gcr-discovery-cache 2\n";
constexpr std::size_t kMaxFileBytes = std::size_t{1} << 20;
// A file per driver root and capability set asked for, and one per GPU read.
constexpr std::size_t kMaxEntries = 64;

// "files-<16 hex digits>": FNV-1a of the key.
std::string file_name(const std::string& key) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : key) hash = (hash ^ c) * 1099511628211ULL;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return std::string("files-") + hex;
}

// Owned by this user and not writable by anyone else.
bool ours(const struct stat& st) {
  return st.st_uid == ::geteuid() && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

bool read_time(FieldReader& r, timespec& t) {
  std::int64_t sec = 0;
  std::uint64_t nsec = 0;
  if (!r.signed_number(sec) || !r.number(nsec) || nsec >= 1000000000) return false;
  t.tv_sec = static_cast<time_t>(sec);
  t.tv_nsec = static_cast<long>(nsec);
  return true;
}

bool read_stamp(FieldReader& r, PathStamp& s) {
  std::uint64_t mode = 0, uid = 0, gid = 0, whole = 0;
  std::int64_t size = 0;
  if (!r.text(s.path) || !r.number(s.dev) || !r.number(s.ino) || !r.number(mode) ||
      !r.number(uid) || !r.number(gid) || !r.number(s.nlink) || !r.signed_number(size) ||
      !read_time(r, s.mtime) || !read_time(r, s.ctime) || !r.number(whole) || whole > 1)
    return false;
  s.whole = whole == 1;
  s.mode = static_cast<std::uint32_t>(mode);
  s.uid = static_cast<std::uint32_t>(uid);
  s.gid = static_cast<std::uint32_t>(gid);
  s.size = size;
  return true;
}

// The first read-only answer that no longer holds, if any.
std::optional<std::string> changed_mount(const std::vector<ReadOnlyAnswer>& answers) {
  for (const auto& answer : answers) {
    struct statvfs fs {};
    if (::statvfs(answer.path.c_str(), &fs) != 0 ||
        ((fs.f_flag & ST_RDONLY) != 0) != answer.read_only)
      return answer.path;
  }
  return std::nullopt;
}

// A stamp whose times are compared and too close to `started` to be trusted, if any.
const PathStamp* racy_stamp(const std::vector<PathStamp>& stamps, timespec started) {
  const time_t limit = started.tv_sec - kRacyWindowSeconds;
  for (const auto& s : stamps) {
    if (s.whole && (s.mtime.tv_sec >= limit || s.ctime.tv_sec >= limit)) return &s;
  }
  return nullptr;
}

// With kMaxEntries kept files or more, removes the older half but `keep` (another shim's
// temporary file, a name starting with '.', is left alone).
void make_room(const Fd& dir, const std::string& path, const std::string& keep) {
  auto copy = Fd(::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!copy.valid()) return;
  auto entries = list_directory(std::move(copy), path, SIZE_MAX);
  if (!entries) return;
  std::vector<std::pair<std::int64_t, std::string>> kept;  // mtime in ns, name
  for (const auto& e : *entries) {
    struct stat st {};
    if (e.name.starts_with(".") || e.name == keep ||
        ::fstatat(dir.get(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    kept.emplace_back(std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec, e.name);
  }
  if (kept.size() < kMaxEntries) return;
  std::sort(kept.begin(), kept.end());
  for (std::size_t i = 0; i < kept.size() / 2; ++i)
    (void)::unlinkat(dir.get(), kept[i].second.c_str(), 0);
}

}  // namespace

timespec realtime_now() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return now;
}

Result<Fd> store_directory(const std::string& dir) {
  const std::string parent = dirname_of(dir);
  if (auto s = TrustCheck(::geteuid()).work_directory(parent); !s) return s.error();
  if (auto s = make_directories(parent); !s) return s.error();
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return Error{"cannot make the directory: " + errno_text(errno) + " (" + dir + ")"};
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0)
    return Error{"cannot open the directory: " + errno_text(errno) + " (" + dir + ")"};
  if (!ours(st)) return Error{"not owned by us alone (" + dir + ")"};
  return fd;
}

std::string write_stamped(const std::string& key, const Stamped& stamped) {
  FieldWriter w;
  w.text(key);
  w.number(stamped.stamps.size());
  for (const auto& s : stamped.stamps) {
    w.text(s.path);
    for (std::uint64_t n :
         {s.dev, s.ino, std::uint64_t{s.mode}, std::uint64_t{s.uid}, std::uint64_t{s.gid}, s.nlink})
      w.number(n);
    w.signed_number(s.size);
    for (const timespec& t : {s.mtime, s.ctime}) {
      w.signed_number(t.tv_sec);
      w.number(static_cast<std::uint64_t>(t.tv_nsec));
    }
    w.number(s.whole ? 1 : 0);
  }
  w.number(stamped.read_only.size());
  for (const auto& answer : stamped.read_only) {
    w.text(answer.path);
    w.number(answer.read_only ? 1 : 0);
  }
  w.text(stamped.payload);
  return std::string(kMagic) + w.take();
}

std::optional<Stamped> read_stamped(std::string_view data, const std::string& key) {
  if (!data.starts_with(kMagic)) return std::nullopt;
  FieldReader r(data.substr(kMagic.size()));
  std::string kept_key;
  std::size_t n = 0;
  if (!r.text(kept_key) || kept_key != key || !r.count(n)) return std::nullopt;
  Stamped stamped;
  for (std::size_t i = 0; i < n; ++i) {
    PathStamp s;
    if (!read_stamp(r, s)) return std::nullopt;
    stamped.stamps.push_back(std::move(s));
  }
  if (!r.count(n)) return std::nullopt;
  for (std::size_t i = 0; i < n; ++i) {
    ReadOnlyAnswer answer;
    std::uint64_t flag = 0;
    if (!r.text(answer.path) || !r.number(flag) || flag > 1) return std::nullopt;
    answer.read_only = flag == 1;
    stamped.read_only.push_back(std::move(answer));
  }
  if (!r.text(stamped.payload) || !r.at_end()) return std::nullopt;
  return stamped;
}

Result<Fd> open_kept_directory(const std::string& dir) {
  Fd dir_fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!dir_fd.valid() && errno == ENOENT) return Error{"nothing kept yet"};
  struct stat st {};
  if (!dir_fd.valid() || ::fstat(dir_fd.get(), &st) != 0 || !ours(st))
    return Error{"not a directory of ours alone (" + dir + ")"};
  return dir_fd;
}

Result<std::string> load_stamped(const std::string& dir, const std::string& key) {
  auto dir_fd = open_kept_directory(dir);
  if (!dir_fd) return dir_fd.error();
  return load_stamped(*dir_fd, dir, key);
}

Result<std::string> load_stamped(const Fd& dir_fd, const std::string& dir, const std::string& key) {
  const std::string name = file_name(key);
  const std::string path = dir + "/" + name;
  Fd fd(::openat(dir_fd.get(), name.c_str(),
                 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid() && errno == ENOENT) return Error{"nothing kept yet"};
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || !ours(st) ||
      st.st_nlink != 1)
    return Error{"not a file of ours alone (" + path + ")"};
  if (static_cast<std::size_t>(st.st_size) > kMaxFileBytes)
    return Error{"larger than 1 MiB (" + path + ")"};
  auto data = read_fd(fd.get(), kMaxFileBytes, st);
  if (!data) return Error{"unreadable: " + data.error().message + " (" + path + ")"};
  auto stamped = read_stamped(*data, key);
  if (!stamped) return Error{"unreadable (" + path + ")"};
  if (auto changed = changed_path(stamped->stamps))
    return Error{"changed since it was kept: " + *changed};
  if (auto changed = changed_mount(stamped->read_only))
    return Error{"remounted since it was kept: " + *changed};
  return std::move(stamped->payload);
}

Status store_stamped(const std::string& dir, const std::string& key, const Stamped& stamped,
                     timespec started) {
  if (const auto* racy = racy_stamp(stamped.stamps, started))
    return Error{"changed less than " + std::to_string(kRacyWindowSeconds) +
                 " s before discovery (" + racy->path + ")"};
  auto fd = store_directory(dir);
  if (!fd) return fd.error();
  const std::string name = file_name(key);
  make_room(*fd, dir, name);
  return write_file_atomic_at(fd->get(), name, write_stamped(key, stamped), FileOwner{0600},
                              Durability::kContent);
}

}  // namespace gcr
