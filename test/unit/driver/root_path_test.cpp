#include <doctest/doctest.h>

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
