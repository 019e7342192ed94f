#include <doctest/doctest.h>

#include "base/text.h"
#include "driver/root_path.h"
#include "test_support.h"

using gcr::resolve_in_root;
using gcr::test::make_symlink;
using gcr::test::TempDir;
using gcr::test::write_file;

TEST_CASE("symlinks resolve inside the root: absolute, relative and climbing links stay in") {
  TempDir t;
  const std::string root = t / "root";
  write_file(root + "/usr/lib64/libcuda.so.550", "x");
  make_symlink("libcuda.so.550", root + "/usr/lib64/libcuda.so.1");
  make_symlink("/usr/lib64/libcuda.so.1", root + "/lib/abs");
  make_symlink("../../../../../../usr/lib64/libcuda.so.1", root + "/lib/climb");
  make_symlink("/", root + "/lib/toroot");
  make_symlink("loop2", root + "/lib/loop1");
  make_symlink("loop1", root + "/lib/loop2");
  CHECK(*resolve_in_root(root, "/usr/lib64/libcuda.so.1") == "/usr/lib64/libcuda.so.550");
  CHECK(*resolve_in_root(root, "/lib/abs") == "/usr/lib64/libcuda.so.550");
  CHECK(*resolve_in_root(root, "/lib/climb") == "/usr/lib64/libcuda.so.550");
  CHECK(*resolve_in_root(root, "/lib/toroot/usr/lib64/libcuda.so.1") ==
        "/usr/lib64/libcuda.so.550");
  CHECK(*resolve_in_root(root, "/../../usr/lib64/./libcuda.so.550") == "/usr/lib64/libcuda.so.550");
  CHECK(*resolve_in_root(root, "/") == "/");
  CHECK(resolve_in_root(root, "/lib/loop1")
            .error()
            .message.find("too many levels of symbolic links") == 0);
  CHECK_FALSE(resolve_in_root(root, "/usr/lib64/missing").ok());
}

TEST_CASE("a resolution continued part by part ends where the whole path's does") {
  TempDir t;
  const std::string root = t / "root";
  write_file(root + "/usr/lib64/libcuda.so.550", "x");
  make_symlink("libcuda.so.550", root + "/usr/lib64/libcuda.so.1");
  make_symlink("/usr/lib64", root + "/lib/abs");
  make_symlink("../..", root + "/lib/up");
  // 30 links to a directory, then 15 to a file: 45 in all, past what one path may follow.
  make_symlink("/usr/lib64", root + "/chain/d0");
  for (int i = 1; i < 30; ++i)
    make_symlink("d" + std::to_string(i - 1), root + "/chain/d" + std::to_string(i));
  make_symlink("libcuda.so.1", root + "/usr/lib64/f0");
  for (int i = 1; i < 15; ++i)
    make_symlink("f" + std::to_string(i - 1), root + "/usr/lib64/f" + std::to_string(i));
  const auto by_parts = [&](const std::string& path) -> std::string {
    gcr::Result<gcr::RootResolution> at = gcr::RootResolution{};
    for (const auto part : gcr::split(path, '/')) {
      if (part.empty()) continue;
      at = gcr::resolve_in_root_from(root, *at, part);
      if (!at) return "error: " + at.error().message;
    }
    return at->resolved.empty() ? "/" : at->resolved;
  };
  const auto whole = [&](const std::string& path) -> std::string {
    auto r = resolve_in_root(root, path);
    return r ? *r : "error: " + r.error().message;
  };
  for (const std::string path :
       {"/usr/lib64/libcuda.so.1", "/lib/abs/libcuda.so.1", "/lib/up/usr/lib64/libcuda.so.1",
        "/lib/up/lib/up/lib/abs/../lib64/libcuda.so.550", "/", "/usr/lib64/missing",
        "/chain/d29/libcuda.so.1", "/chain/d29/f14", "/usr/lib64/f14"}) {
    CAPTURE(path);
    CHECK(by_parts(path) == whole(path));
  }
  CHECK(whole("/chain/d29/f14").find("too many levels of symbolic links") != std::string::npos);
  CHECK(whole("/usr/lib64/f14") == "/usr/lib64/libcuda.so.550");
}

// The resolver asks the kernel (openat2 in the root) where a path leads and walks the parts
// only when that fails: both must give resolve_in_root's answer, error text included, also for
// a root named through a symlink (whose /proc/self/fd name is another) and a root that is a
// prefix of a sibling's name.
TEST_CASE("RootResolver answers as resolve_in_root does, by the kernel or part by part") {
  TempDir t;
  const std::string root = t / "root";
  write_file(root + "/usr/lib64/libcuda.so.550", "x");
  write_file(t / "rootless/usr/lib64/libcuda.so.550", "outside");
  make_symlink("libcuda.so.550", root + "/usr/lib64/libcuda.so.1");
  make_symlink("/usr/lib64", root + "/lib/abs");
  make_symlink("../..", root + "/lib/up");
  make_symlink("../../rootless/usr/lib64/libcuda.so.550", root + "/lib/sibling");
  make_symlink("loop2", root + "/lib/loop1");
  make_symlink("loop1", root + "/lib/loop2");
  make_symlink(root, t / "via");
  for (const std::string& named : {root, t / "via"}) {
    gcr::RootResolver resolver(named);
    for (const std::string path :
         {"/usr/lib64/libcuda.so.1", "/lib/abs/libcuda.so.1", "/lib/up/usr/lib64/libcuda.so.1",
          "/lib/up/lib/abs/../lib64/libcuda.so.550", "/", "//usr//lib64/", "/usr/lib64/missing",
          "/lib/sibling", "/lib/loop1", "/lib/abs/missing/deeper"}) {
      CAPTURE(named);
      CAPTURE(path);
      const auto expected = resolve_in_root(named, path);
      for (int asked = 0; asked < 2; ++asked) {  // the second answer is the remembered one
        const auto got = resolver.resolve(path);
        REQUIRE(got.ok() == expected.ok());
        if (got) CHECK(*got == *expected);
        if (!got) CHECK(got.error().message == expected.error().message);
      }
    }
  }
}
