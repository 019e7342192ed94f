#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

#include "base/fs.h"
#include "test_support.h"

using gcr::Durability;
using gcr::test::TempDir;

namespace {

// The events read from the inotify instance `watch` since the last call: mask and name each.
std::vector<std::pair<std::uint32_t, std::string>> drain(int watch) {
  std::vector<std::pair<std::uint32_t, std::string>> events;
  alignas(inotify_event) char buf[4096];
  for (ssize_t n; (n = ::read(watch, buf, sizeof buf)) > 0;) {
    for (char* at = buf; at < buf + n;) {
      const auto* e = reinterpret_cast<const inotify_event*>(at);
      events.emplace_back(e->mask, e->len > 0 ? e->name : "");
      at += sizeof(inotify_event) + e->len;
    }
  }
  return events;
}

int entries_in(const std::string& dir) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("write_file_atomic_at replaces the file whole, with its mode, and leaves no temp") {
  TempDir dir;
  gcr::test::write_file(dir / "f", "old");
  gcr::Fd fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  for (auto durability : {Durability::kContentAndName, Durability::kContent}) {
    REQUIRE(gcr::write_file_atomic_at(fd.get(), "f", "new", gcr::FileOwner{0600}, durability));
    CHECK(gcr::test::read_file(dir / "f") == "new");
    struct stat st {};
    REQUIRE(::stat((dir / "f").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0600);
    CHECK(entries_in(dir.path()) == 1);
  }
}

// A directory opened O_PATH serves every *at call but cannot be synced: which of the two
// durabilities syncs the directory shows through it.
TEST_CASE("only kContentAndName syncs the directory; files rewritten on every create skip it") {
  TempDir dir;
  gcr::Fd path_only(::open(dir.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(path_only.valid());
  auto synced = gcr::write_file_atomic_at(path_only.get(), "f", "a", gcr::FileOwner{},
                                          Durability::kContentAndName);
  REQUIRE_FALSE(synced);
  CHECK(synced.error().message.find("fsync of directory") != std::string::npos);
  REQUIRE(
      gcr::write_file_atomic_at(path_only.get(), "f", "b", gcr::FileOwner{}, Durability::kContent));
  CHECK(gcr::test::read_file(dir / "f") == "b");
  CHECK(entries_in(dir.path()) == 1);
}

// A rootfs file (kNone) that already holds the data is kept: the same inode. Anything else
// about it that a new file would not have (data, mode, a second name, a symlink) replaces it.
TEST_CASE("kNone leaves a file holding exactly the data as it is, and replaces any other") {
  TempDir dir;
  gcr::Fd fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto inode = [&](const std::string& name) {
    struct stat st {};
    REQUIRE(::lstat((dir / name).c_str(), &st) == 0);
    return st.st_ino;
  };
  auto write = [&](const std::string& name, std::string_view data, mode_t mode = 0644) {
    REQUIRE(
        gcr::write_file_atomic_at(fd.get(), name, data, gcr::FileOwner{mode}, Durability::kNone));
  };
  write("f", "cache");
  const auto first = inode("f");
  write("f", "cache");
  CHECK(inode("f") == first);
  write("f", "cachE");
  CHECK(inode("f") != first);
  CHECK(gcr::test::read_file(dir / "f") == "cachE");
  const auto second = inode("f");
  write("f", "cachE", 0600);
  CHECK(inode("f") != second);
  write("f", "cach");
  CHECK(gcr::test::read_file(dir / "f") == "cach");
  // A second name: writing through it must not change the other file.
  REQUIRE(::link((dir / "f").c_str(), (dir / "g").c_str()) == 0);
  write("f", "cach");
  CHECK(inode("f") != inode("g"));
  // A symlink to a file holding the data is replaced by a file.
  gcr::test::write_file(dir / "target", "cach");
  REQUIRE(::chmod((dir / "target").c_str(), 0644) == 0);
  REQUIRE(::symlink("target", (dir / "s").c_str()) == 0);
  write("s", "cach");
  struct stat st {};
  REQUIRE(::lstat((dir / "s").c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
}

TEST_CASE("unchanged_since_read: the same file of one name, not changed since, as a new one") {
  TempDir dir;
  gcr::Fd fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const auto stat_of = [&](const std::string& name) {
    struct stat st {};
    REQUIRE(::lstat((dir / name).c_str(), &st) == 0);
    return st;
  };
  const auto unchanged = [&](const std::string& name, const struct stat& read) {
    return gcr::unchanged_since_read(fd.get(), name, read, gcr::FileOwner{});
  };
  gcr::test::write_file(dir / "f", "cache");
  REQUIRE(::chmod((dir / "f").c_str(), 0644) == 0);
  const struct stat read = stat_of("f");
  CHECK(unchanged("f", read));
  // Changed since it was read: a ctime of another moment (no write keeps it).
  struct stat older = read;
  older.st_ctim.tv_nsec = (older.st_ctim.tv_nsec + 1) % 1000000000;
  CHECK_FALSE(unchanged("f", older));
  // Another file put at the name, the same bytes: another inode.
  gcr::test::write_file(dir / "g", "cache");
  REQUIRE(::chmod((dir / "g").c_str(), 0644) == 0);
  REQUIRE(::rename((dir / "g").c_str(), (dir / "f").c_str()) == 0);
  CHECK_FALSE(unchanged("f", read));
  const struct stat again = stat_of("f");
  CHECK(unchanged("f", again));
  // Not as a new one would be: another mode, a second name, a symlink at the name.
  REQUIRE(::chmod((dir / "f").c_str(), 0600) == 0);
  CHECK_FALSE(unchanged("f", stat_of("f")));
  REQUIRE(::chmod((dir / "f").c_str(), 0644) == 0);
  REQUIRE(::link((dir / "f").c_str(), (dir / "h").c_str()) == 0);
  CHECK_FALSE(unchanged("f", stat_of("f")));
  REQUIRE(::unlink((dir / "h").c_str()) == 0);
  CHECK(unchanged("f", stat_of("f")));
  REQUIRE(::symlink("f", (dir / "s").c_str()) == 0);
  CHECK_FALSE(unchanged("s", stat_of("f")));
  CHECK_FALSE(unchanged("missing", read));
}

// A first start's drop-in: where nothing is at the name, the complete new file appears under it
// directly; no temporary name shows in the rootfs, nor a rename. Replacing goes the usual way.
TEST_CASE("kNone gives a new file its name directly where none is, a temporary name otherwise") {
  TempDir dir;
  gcr::Fd fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  gcr::Fd watch(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  REQUIRE(watch.valid());
  REQUIRE(::inotify_add_watch(watch.get(), dir.path().c_str(), IN_CREATE | IN_MOVED_TO) >= 0);
  // The names created and moved into the directory since the last call, in order.
  const auto seen = [&] {
    std::vector<std::string> names;
    for (const auto& [mask, name] : drain(watch.get()))
      names.push_back(std::string((mask & IN_MOVED_TO) ? "moved " : "created ") + name);
    return names;
  };
  REQUIRE(
      gcr::write_file_atomic_at(fd.get(), "f", "cache", gcr::FileOwner{0644}, Durability::kNone));
  CHECK(seen() == std::vector<std::string>{"created f"});
  CHECK(gcr::test::read_file(dir / "f") == "cache");
  struct stat st {};
  REQUIRE(::stat((dir / "f").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0644);
  REQUIRE(
      gcr::write_file_atomic_at(fd.get(), "f", "cachE", gcr::FileOwner{0644}, Durability::kNone));
  const auto replaced = seen();
  REQUIRE(replaced.size() == 2);
  CHECK(replaced[0].rfind("created .f.", 0) == 0);
  CHECK(replaced[1] == "moved f");
  CHECK(gcr::test::read_file(dir / "f") == "cachE");
  CHECK(entries_in(dir.path()) == 1);
}

// An image may put anything at the name: a FIFO or device node is replaced without being
// opened, a symlink is replaced, never followed (its target is not made).
TEST_CASE("kNone opens no FIFO at the name and follows no symlink there: both are replaced") {
  TempDir dir;
  const std::string root = dir / "rootfs";
  gcr::test::make_dirs(root);
  gcr::Fd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  REQUIRE(::mkfifo((root + "/fifo").c_str(), 0644) == 0);
  REQUIRE(::symlink("../outside", (root + "/link").c_str()) == 0);
  gcr::Fd watch(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  REQUIRE(watch.valid());
  REQUIRE(::inotify_add_watch(watch.get(), root.c_str(), IN_OPEN) >= 0);
  for (const char* name : {"fifo", "link"}) {
    REQUIRE(gcr::write_file_atomic_at(fd.get(), name, "cache", gcr::FileOwner{0644},
                                      Durability::kNone));
  }
  const auto opened = drain(watch.get());
  CHECK(std::none_of(opened.begin(), opened.end(),
                     [](const auto& event) { return event.second == "fifo"; }));
  for (const char* name : {"fifo", "link"}) {
    struct stat st {};
    REQUIRE(::lstat((root + "/" + name).c_str(), &st) == 0);
    CHECK(S_ISREG(st.st_mode));
    CHECK(gcr::test::read_file(root + "/" + name) == "cache");
  }
  CHECK_FALSE(gcr::test::exists(dir / "outside"));
}

// The loader cache goes into an image's /etc, which may hold millions of names: a temporary
// file a killed writer left is looked for in a directory of at most 4,096 entries.
TEST_CASE("a stale temporary file is removed in a small directory; a large one is not listed") {
  for (const int others : {10, 5000}) {
    CAPTURE(others);
    TempDir dir;
    for (int i = 0; i < others; ++i) gcr::test::write_file(dir / ("f" + std::to_string(i)), "");
    const std::string stale = dir / ".cache.0123456789abcdef.tmp";
    gcr::test::write_file(stale, "old");
    const struct timespec old_times[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
    REQUIRE(::utimensat(AT_FDCWD, stale.c_str(), old_times, 0) == 0);
    gcr::Fd fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    // A file rewritten in a rootfs (kNone) has one fixed temporary name: no folder is listed.
    for (auto durability : {Durability::kNone, Durability::kContentAndName}) {
      gcr::test::write_file(dir / "cache", "other");
      REQUIRE(
          gcr::write_file_atomic_at(fd.get(), "cache", "new", gcr::FileOwner{0644}, durability));
      CHECK(gcr::test::read_file(dir / "cache") == "new");
      CHECK(gcr::test::exists(stale) == (durability == Durability::kNone || others > 4096));
    }
  }
}

TEST_CASE("kNone's one temporary name is taken over from what a killed writer left, not followed") {
  TempDir dir;
  gcr::Fd fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const std::string temp = dir / ".cache.gpu-container-runtime.tmp";
  const auto write = [&] {
    gcr::test::write_file(dir / "cache", "other");
    return gcr::write_file_atomic_at(fd.get(), "cache", "new", gcr::FileOwner{0644},
                                     Durability::kNone);
  };
  const auto age = [&] {  // as a writer killed two minutes ago left it
    const struct timespec old[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
    REQUIRE(::utimensat(AT_FDCWD, temp.c_str(), old, AT_SYMLINK_NOFOLLOW) == 0);
  };
  gcr::test::write_file(temp, "half");
  age();
  REQUIRE(write());
  CHECK(gcr::test::read_file(dir / "cache") == "new");
  CHECK(entries_in(dir.path()) == 1);
  gcr::test::write_file(dir / "victim", "victim");
  REQUIRE(::symlink("victim", temp.c_str()) == 0);
  age();
  REQUIRE(write());
  CHECK(gcr::test::read_file(dir / "cache") == "new");
  CHECK(gcr::test::read_file(dir / "victim") == "victim");
  CHECK(entries_in(dir.path()) == 2);
  // A live writer's (fresh) and a folder are left: a random name is used instead.
  for (const bool folder : {false, true}) {
    CAPTURE(folder);
    if (folder) {
      REQUIRE(::unlink(temp.c_str()) == 0);
      REQUIRE(::mkdir(temp.c_str(), 0755) == 0);
      age();
    } else {
      gcr::test::write_file(temp, "being written");
    }
    REQUIRE(write());
    CHECK(gcr::test::read_file(dir / "cache") == "new");
    CHECK(gcr::test::exists(temp));
    CHECK(entries_in(dir.path()) == 3);
  }
}

TEST_CASE("read_fd reads a file whole, and refuses one byte past the limit") {
  TempDir dir;
  const std::string text(100000, 'x');
  gcr::test::write_file(dir / "f", text);
  const auto read_with = [&](std::size_t max_bytes) {
    gcr::Fd fd(::open((dir / "f").c_str(), O_RDONLY | O_CLOEXEC));
    return gcr::read_fd(fd.get(), max_bytes);
  };
  auto whole = read_with(text.size());
  REQUIRE(whole.ok());
  CHECK(*whole == text);
  auto over = read_with(text.size() - 1);
  REQUIRE_FALSE(over.ok());
  CHECK(over.error().message == "larger than 99999 bytes");
  gcr::test::write_file(dir / "f", "");
  auto empty = read_with(0);
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("read_fd reads what a file holds when its size changed after the stat it is given") {
  TempDir dir;
  gcr::test::write_file(dir / "f", "abc");
  gcr::Fd fd(::open((dir / "f").c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  REQUIRE(::fstat(fd.get(), &st) == 0);
  gcr::test::write_file(dir / "f", "abcdefgh");  // grown in place, past the room for 3 + 1
  auto grown = gcr::read_fd(fd.get(), 100, st);
  REQUIRE(grown.ok());
  CHECK(*grown == "abcdefgh");
  REQUIRE(::lseek(fd.get(), 0, SEEK_SET) == 0);
  REQUIRE(::fstat(fd.get(), &st) == 0);
  REQUIRE(::truncate((dir / "f").c_str(), 2) == 0);  // shrunk: a short read, then the end
  auto shrunk = gcr::read_fd(fd.get(), 100, st);
  REQUIRE(shrunk.ok());
  CHECK(*shrunk == "ab");
}

TEST_CASE("read_fd reads a /proc file, whose size says 0, whole") {
  gcr::Fd fd(::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
  auto read = gcr::read_fd(fd.get(), 1 << 20);
  REQUIRE(read.ok());
  CHECK(read->find("Name:") == 0);
  CHECK(read->find("VmPeak") != std::string::npos);
}

TEST_CASE("read_fd reads a pipe, whose size is unknown, past its first buffer") {
  int ends[2];
  REQUIRE(::pipe2(ends, O_CLOEXEC) == 0);
  gcr::Fd read_end(ends[0]);
  std::string text;
  for (int i = 0; text.size() < 300000; ++i) text += std::to_string(i) + ",";
  std::thread writer([&] {
    gcr::Fd write_end(ends[1]);
    for (std::size_t at = 0; at < text.size();) {
      const ssize_t n = ::write(write_end.get(), text.data() + at, text.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
  });
  auto read = gcr::read_fd(read_end.get(), 1 << 20);
  writer.join();
  REQUIRE(read.ok());
  CHECK(*read == text);
}

TEST_CASE("list_directory: sorted names, no dot entries, symlinks marked, a bound") {
  TempDir dir;
  gcr::test::write_file(dir / "b", "");
  gcr::test::write_file(dir / "a", "");
  REQUIRE(::symlink("a", (dir / "c").c_str()) == 0);
  const auto list = [&](std::size_t max_entries) {
    return gcr::list_directory(
        gcr::Fd(::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)), dir.path(),
        max_entries);
  };
  auto entries = list(3);
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 3);
  CHECK(((*entries)[0].name == "a" && !(*entries)[0].symlink));
  CHECK(((*entries)[1].name == "b" && !(*entries)[1].symlink));
  CHECK(((*entries)[2].name == "c" && (*entries)[2].symlink));
  auto bounded = list(2);
  REQUIRE_FALSE(bounded.ok());
  CHECK(bounded.error().message == dir.path() + " has too many entries");
}
