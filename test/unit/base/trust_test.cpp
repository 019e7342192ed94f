#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include "base/trust.h"
#include "test_support.h"

using gcr::test::TempDir;
using gcr::test::write_file;

namespace {

std::string refusal_of(const std::string& path) {
  gcr::TrustCheck trust;
  auto s = trust.program(path);
  REQUIRE_FALSE(s.ok());
  return s.error().message;
}

}  // namespace

TEST_CASE("only programs nobody but root can replace pass") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "ownership checks need files owned by root and others");
  TempDir dir;
  write_file(dir / "bin/tool", "#!/bin/sh\n", 0755);
  gcr::TrustCheck trust;
  CHECK(trust.program(dir / "bin/tool").ok());
  CHECK(trust.program("/bin/sh").ok());

  write_file(dir / "bin/data", "x", 0644);
  CHECK(refusal_of(dir / "bin/data") == "not executable (" + dir / "bin/data" + ")");
  write_file(dir / "bin/open", "#!/bin/sh\n", 0757);
  REQUIRE(::chmod((dir / "bin/open").c_str(), 0757) == 0);
  CHECK(refusal_of(dir / "bin/open") == "writable by group or others (" + dir / "bin/open" + ")");
  write_file(dir / "bin/theirs", "#!/bin/sh\n", 0755);
  REQUIRE(::chown((dir / "bin/theirs").c_str(), 1000, 1000) == 0);
  CHECK(refusal_of(dir / "bin/theirs") == "not owned by root (" + dir / "bin/theirs" + ")");
  CHECK(refusal_of("relative/tool") == "not an absolute path (relative/tool)");
  CHECK(refusal_of(dir / "bin/missing").find("No such file or directory") == 0);

  // A directory others can write, on the way to the program or to a symlink's target.
  write_file(dir / "open/tool", "#!/bin/sh\n", 0755);
  REQUIRE(::chmod((dir / "open").c_str(), 0777) == 0);
  CHECK(refusal_of(dir / "open/tool") == "writable by group or others (" + dir / "open" + ")");
  gcr::test::make_symlink(dir / "open/tool", dir / "bin/link");
  CHECK(refusal_of(dir / "bin/link") == "writable by group or others (" + dir / "open" + ")");
  gcr::test::make_symlink(dir / "open", dir / "via");
  CHECK(refusal_of(dir / "via/tool") == "writable by group or others (" + dir / "open" + ")");
  // ... or a symlink further up than the program's own directory.
  write_file(dir / "open/sub/tool", "#!/bin/sh\n", 0755);
  CHECK(refusal_of(dir / "via/sub/tool") == "writable by group or others (" + dir / "open" + ")");
  gcr::test::make_symlink(dir / "bin", dir / "safe");
  write_file(dir / "bin/sub/tool", "#!/bin/sh\n", 0755);
  CHECK(trust.program(dir / "safe/sub/tool").ok());
  // A file reached through a symlinked directory is judged, and named, where it really is.
  CHECK(refusal_of(dir / "safe/theirs") == "not owned by root (" + dir / "bin/theirs" + ")");
  CHECK(refusal_of(dir / "safe/sub/../theirs") == "not owned by root (" + dir / "bin/theirs" + ")");

  // A sticky directory is fine when the entry in it is root's.
  gcr::test::make_dirs(dir / "sticky");
  REQUIRE(::chmod((dir / "sticky").c_str(), 01777) == 0);
  write_file(dir / "sticky/tool", "#!/bin/sh\n", 0755);
  CHECK(trust.program(dir / "sticky/tool").ok());
  gcr::test::make_dirs(dir / "sticky/theirs");
  write_file(dir / "sticky/theirs/tool", "#!/bin/sh\n", 0755);
  REQUIRE(::chown((dir / "sticky/theirs").c_str(), 1000, 1000) == 0);
  CHECK(refusal_of(dir / "sticky/theirs/tool") ==
        "not owned by root (" + dir / "sticky/theirs" + ")");
}

TEST_CASE("a directory we make things in: root's alone, a sticky directory not enough") {
  // The test's own user trusted as root is: runs as anyone.
  const uid_t me = ::geteuid();
  const auto refusal = [&](const std::string& path) {
    auto s = gcr::TrustCheck(me).work_directory(path);
    REQUIRE_FALSE(s.ok());
    return s.error().message;
  };
  const auto make_dir = [](const std::string& path, mode_t mode) {
    gcr::test::make_dirs(path);
    REQUIRE(::chmod(path.c_str(), mode) == 0);
  };
  TempDir dir;
  gcr::TrustCheck trust(me);
  CHECK(trust.work_directory(dir.path()).ok());
  // Missing: judged where its first directory would be made.
  CHECK(trust.work_directory(dir / "a/b/c").ok());
  // A sticky directory anyone can write (as /tmp): refused to make things in, and as the
  // directory itself; a directory in it that only root can change is fine.
  make_dir(dir / "sticky", 01777);
  CHECK(refusal(dir / "sticky/mps") == "writable by group or others (" + dir / "sticky" + ")");
  CHECK(refusal(dir / "sticky") == "writable by group or others (" + dir / "sticky" + ")");
  make_dir(dir / "sticky/mine", 0755);
  CHECK(trust.work_directory(dir / "sticky/mine/mps").ok());
  make_dir(dir / "group", 0775);
  CHECK(refusal(dir / "group/x/y") == "writable by group or others (" + dir / "group" + ")");
  // Through a symlink: judged, and named, where it leads.
  gcr::test::make_symlink(dir / "sticky", dir / "link");
  CHECK(refusal(dir / "link/mps") == "writable by group or others (" + dir / "sticky" + ")");
  CHECK(refusal("run/mps") == "not an absolute path (run/mps)");
  write_file(dir / "file", "x");
  CHECK(refusal(dir / "file") == "not a directory (" + dir / "file" + ")");
  if (gcr::test::is_root()) {
    make_dir(dir / "theirs", 0755);
    REQUIRE(::chown((dir / "theirs").c_str(), 65534, 65534) == 0);
    CHECK(refusal(dir / "theirs/mps") == "not owned by root (" + dir / "theirs" + ")");
  }
}
