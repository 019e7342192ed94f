#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "base/fs.h"
#include "test_support.h"

using gcr::Durability;
using gcr::test::TempDir;

namespace {

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
