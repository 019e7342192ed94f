// The in-root resolver against hostile trees, with openat2 and with the fallback walk.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "hooks/container_hooks.h"
#include "hooks/rootfs.h"
#include "test_support.h"

using gcr::test::make_dirs;
using gcr::test::make_symlink;
using gcr::test::TempDir;
using gcr::test::write_file;

namespace {

// <t>/rootfs is the container; <t>/outside holds canaries the image points at.
struct HostileTree {
  TempDir t;
  std::string rootfs = t / "rootfs";
  std::string outside = t / "outside";
  HostileTree() {
    write_file(outside + "/canary", "canary");
    write_file(rootfs + "/usr/lib/real/libx.so", "lib");
    make_symlink(outside, rootfs + "/abs");  // absolute link to a host dir
    make_symlink("../../../../../../../../" + outside.substr(1), rootfs + "/climb");  // climbs out
    make_symlink("/", rootfs + "/usr/lib64");       // lib dir -> /
    make_symlink("../..", rootfs + "/usr/lib/up");  // relative, stays in
    make_symlink("loop-b", rootfs + "/loop-a");
    make_symlink("loop-a", rootfs + "/loop-b");
    make_symlink("/proc/self/root", rootfs + "/magic");
  }
};

// A tmpfs mounted at `at` (made first) while the object lives: a volume in the image's tree.
struct VolumeAt {
  std::string at;
  explicit VolumeAt(std::string where) : at(std::move(where)) {
    make_dirs(at);
    REQUIRE(::mount("tmpfs", at.c_str(), "tmpfs", 0, nullptr) == 0);
  }
  ~VolumeAt() { ::umount2(at.c_str(), MNT_DETACH); }
  VolumeAt(const VolumeAt&) = delete;
  VolumeAt& operator=(const VolumeAt&) = delete;
};

std::string fd_path(const gcr::Fd& fd) {
  char buf[4096];
  const ssize_t n =
      ::readlink(("/proc/self/fd/" + std::to_string(fd.get())).c_str(), buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : "";
}

// canonical's answer, or its error as text.
std::string answer(const gcr::Result<std::string>& c) {
  return c ? *c : "error: " + c.error().message;
}

}  // namespace

TEST_CASE("resolution stays inside the root, with both resolvers") {
  for (const auto resolver : {gcr::Resolver::kAuto, gcr::Resolver::kFallback}) {
    CAPTURE(static_cast<int>(resolver));
    HostileTree tree;
    auto root = gcr::RootFs::open(tree.rootfs, resolver);
    REQUIRE(root.ok());
    CHECK(fd_path(*root->open_at("/usr/lib64/usr/lib/real/libx.so", O_RDONLY)) ==
          tree.rootfs + "/usr/lib/real/libx.so");
    CHECK(fd_path(*root->open_at("/usr/lib/up/usr/lib/real", O_PATH)) ==
          tree.rootfs + "/usr/lib/real");
    CHECK(fd_path(*root->open_at("/../../../usr/lib/real", O_PATH)) ==
          tree.rootfs + "/usr/lib/real");
    CHECK_FALSE(root->open_at("/abs/canary", O_RDONLY).ok());
    CHECK_FALSE(root->open_at("/climb/canary", O_RDONLY).ok());
    CHECK_FALSE(root->open_at("/loop-a", O_RDONLY).ok());
    auto magic = root->open_at("/magic", O_PATH);
    CHECK((!magic.ok() || fd_path(*magic).rfind(tree.rootfs, 0) == 0));
  }
}

TEST_CASE("canonical with resolved directories answers as canonical does, one set for all") {
  for (const auto resolver : {gcr::Resolver::kAuto, gcr::Resolver::kFallback}) {
    CAPTURE(static_cast<int>(resolver));
    HostileTree tree;
    write_file(tree.rootfs + "/usr/lib/x86_64-linux-gnu/libc.so.6", "libc");
    write_file(tree.rootfs + "/etc/ld.so.cache", "cache");
    make_dirs(tree.rootfs + "/usr/share/empty");
    make_symlink("usr/lib", tree.rootfs + "/lib");
    make_symlink("/etc/missing.conf", tree.rootfs + "/dangling");
    auto root = gcr::RootFs::open(tree.rootfs, resolver);
    REQUIRE(root.ok());
    gcr::ResolvedDirs known;
    // Twice: the second round is answered from what the first learnt.
    for (int round = 0; round < 2; ++round) {
      for (const std::string path : {"/",
                                     "/usr",
                                     "/usr/lib/real/libx.so",
                                     "//usr/./lib/real/",
                                     "/usr/bin/nvidia-smi",
                                     "/usr/bin/nvidia-debugdump",
                                     "/usr/bin",
                                     "/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                     "/usr/lib/x86_64-linux-gnu/libc.so.6",
                                     "/usr/lib/x86_64-linux-gnu",
                                     "/usr/lib/real/missing/deeper",
                                     "/run/nvidia-persistenced/socket",
                                     "/usr/lib64/usr/lib/real",
                                     "/usr/lib/up/usr/lib/real",
                                     "/lib/real/libx.so",
                                     "/lib/x86_64-linux-gnu/libc.so.6",
                                     "/abs/canary",
                                     "/abs",
                                     "/climb/canary",
                                     "/usr/../etc",
                                     "/dangling",
                                     "/dangling/below",
                                     "/loop-a",
                                     "/loop-a/x",
                                     "/etc/ld.so.cache/x",
                                     "/etc/ld.so.cache",
                                     "/usr/share/empty/x",
                                     "/magic/etc"}) {
        CAPTURE(path);
        CHECK(answer(root->canonical(path, known)) == answer(root->canonical(path)));
      }
    }
  }
}

TEST_CASE("canonical with resolved directories answers from what it learnt") {
  HostileTree tree;
  auto root = gcr::RootFs::open(tree.rootfs);
  REQUIRE(root.ok());
  gcr::ResolvedDirs known;
  CHECK(answer(root->canonical("/usr/bin/nvidia-smi", known)) == "/usr/bin/nvidia-smi");
  CHECK(answer(root->canonical("/usr/lib/real/libcuda.so.1", known)) ==
        "/usr/lib/real/libcuda.so.1");
  // Changed behind its back (which its callers never do), the root answers anew, and what was
  // learnt does not: the answers above came from the directories it kept, not from canonical.
  make_symlink("/opt", tree.rootfs + "/usr/bin");
  make_dirs(tree.rootfs + "/opt");
  std::rename((tree.rootfs + "/usr/lib/real").c_str(), (tree.rootfs + "/usr/lib/moved").c_str());
  make_symlink("/opt", tree.rootfs + "/usr/lib/real");
  CHECK(answer(root->canonical("/usr/bin/nvidia-smi")) == "/opt/nvidia-smi");
  CHECK(answer(root->canonical("/usr/bin/nvidia-smi", known)) == "/usr/bin/nvidia-smi");
  CHECK(answer(root->canonical("/usr/lib/real/libcuda.so.1", known)) ==
        "/usr/lib/real/libcuda.so.1");
}

TEST_CASE("canonical with resolved directories: past its size, too long, across another mount") {
  HostileTree tree;
  const std::size_t many = gcr::ResolvedDirs::kMaxDirectories + 40;
  for (std::size_t i = 0; i < many; ++i) make_dirs(tree.rootfs + "/many/d" + std::to_string(i));
  auto root = gcr::RootFs::open(tree.rootfs);
  REQUIRE(root.ok());
  gcr::ResolvedDirs known;
  for (std::size_t i = 0; i < many; ++i) {
    const std::string path = "/many/d" + std::to_string(i) + "/lib.so";
    CHECK(answer(root->canonical(path, known)) == path);
  }
  // Longer than the kernel takes a path: refused as canonical(path) refuses it, though nothing
  // on the way exists.
  const std::string long_path = "/missing/" + std::string(5000, 'x');
  CHECK(answer(root->canonical(long_path, known)).rfind("error: ", 0) == 0);
  CHECK(answer(root->canonical(long_path, known)) == answer(root->canonical(long_path)));
  if (!gcr::test::is_root()) return;
  // A volume in the image's tree: runc would not resolve through it (RESOLVE_NO_XDEV).
  const VolumeAt volume(tree.rootfs + "/vol");
  make_dirs(tree.rootfs + "/vol/sub");
  gcr::ResolvedDirs fresh;
  for (const std::string path : {"/vol", "/vol/sub", "/vol/sub/x", "/vol/x", "/vol/sub/x"}) {
    CAPTURE(path);
    CHECK(answer(root->canonical(path, fresh)) == answer(root->canonical(path)));
  }
  CHECK_FALSE(root->canonical("/vol/sub/x", fresh).ok());
}

TEST_CASE("make_dirs creates inside the root, even through links that point outside") {
  for (const auto resolver : {gcr::Resolver::kAuto, gcr::Resolver::kFallback}) {
    CAPTURE(static_cast<int>(resolver));
    HostileTree tree;
    auto root = gcr::RootFs::open(tree.rootfs, resolver);
    REQUIRE(root.ok());
    auto abs = root->make_dirs("/abs/created");
    REQUIRE(abs.ok());
    CHECK(fd_path(*abs) == tree.rootfs + tree.outside + "/created");
    auto climb = root->make_dirs("/climb/made");
    REQUIRE(climb.ok());
    CHECK(fd_path(*climb).rfind(tree.rootfs + "/", 0) == 0);
    auto lib = root->make_dirs("/usr/lib64/etc/ld.so.conf.d");
    REQUIRE(lib.ok());
    CHECK(fd_path(*lib) == tree.rootfs + "/etc/ld.so.conf.d");
    CHECK_FALSE(gcr::test::exists(tree.outside + "/created"));
    CHECK_FALSE(gcr::test::exists(tree.outside + "/made"));
    CHECK(gcr::test::read_file(tree.outside + "/canary") == "canary");
    write_file(tree.rootfs + "/file", "x");
    auto file = root->make_dirs("/file/sub/deeper");
    REQUIRE_FALSE(file.ok());
    CHECK(file.error().message == "Not a directory (/file in " + tree.rootfs + ")");
    CHECK_FALSE(root->make_dirs("/loop-a/sub").ok());
    // A chain of missing folders, each made in the one made before; the last is opened for
    // writing into.
    bool wrote = false;
    auto chain = root->make_dirs("/opt/chain/a/b/c", &wrote);
    REQUIRE(chain.ok());
    CHECK(wrote);
    CHECK(fd_path(*chain) == tree.rootfs + "/opt/chain/a/b/c");
    gcr::Fd made(::openat(chain->get(), "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
    CHECK(made.valid());
    CHECK(gcr::test::exists(tree.rootfs + "/opt/chain/a/b/c/f"));
    wrote = false;
    auto again = root->make_dirs("/opt/chain/a/b/c", &wrote);
    REQUIRE(again.ok());
    CHECK_FALSE(wrote);
  }
}

TEST_CASE("make_dirs never makes a folder across a mount in the image, however it is named") {
  if (!gcr::test::is_root()) return;
  for (const auto resolver : {gcr::Resolver::kAuto, gcr::Resolver::kFallback}) {
    CAPTURE(static_cast<int>(resolver));
    HostileTree tree;
    make_dirs(tree.rootfs + "/etc");
    const VolumeAt volume(tree.rootfs + "/vol");
    make_symlink("/vol", tree.rootfs + "/etc/volume");
    auto root = gcr::RootFs::open(tree.rootfs, resolver);
    REQUIRE(root.ok());
    // The mount point itself, its folder through a link, and after a folder made and left by
    // "..": each refused, nothing made on the volume.
    for (const std::string path :
         {"/vol", "/vol/made", "/etc/volume", "/etc/volume/made", "/opt/new/../../vol/made",
          "/opt/other/../../vol", "/etc/new/../volume"}) {
      CAPTURE(path);
      CHECK_FALSE(root->make_dirs(path).ok());
    }
    CHECK(std::filesystem::is_empty(tree.rootfs + "/vol"));
  }
}

TEST_CASE("make_dirs and create_symlinks say whether they wrote, which clears what was learnt") {
  HostileTree tree;
  auto root = gcr::RootFs::open(tree.rootfs);
  REQUIRE(root.ok());
  bool wrote = false;
  REQUIRE(root->make_dirs("/usr/lib/real", &wrote).ok());
  CHECK_FALSE(wrote);
  REQUIRE(gcr::create_symlinks(*root, {"real/libx.so::/usr/lib/libx.so"}, &wrote).ok());
  CHECK(wrote);
  wrote = false;
  REQUIRE(gcr::create_symlinks(*root, {"real/libx.so::/usr/lib/libx.so"}, &wrote).ok());
  CHECK_FALSE(wrote);  // the same link is left alone
  REQUIRE(root->make_dirs("/abs/new/dir", &wrote).ok());
  CHECK(wrote);  // made where the dangling link leads, inside the root
  wrote = false;
  REQUIRE(gcr::create_symlinks(*root, {"x::/opt/links/libx.so"}, &wrote).ok());
  CHECK(wrote);  // its folder made first
}

TEST_CASE("create_symlinks: new links made, the same kept, another replaced, folders alternating") {
  HostileTree tree;
  auto root = gcr::RootFs::open(tree.rootfs);
  REQUIRE(root.ok());
  write_file(tree.rootfs + "/usr/lib/real/libold.so", "x");
  REQUIRE(::symlink("elsewhere", (tree.rootfs + "/usr/lib/real/liby.so.1").c_str()) == 0);
  REQUIRE(::symlink("liba.so.1", (tree.rootfs + "/usr/lib/real/liba.so").c_str()) == 0);
  const auto link_at = [&](const std::string& path) {
    char buf[256];
    const ssize_t n = ::readlink((tree.rootfs + path).c_str(), buf, sizeof buf);
    return n < 0 ? std::string("(none)") : std::string(buf, static_cast<std::size_t>(n));
  };
  bool wrote = false;
  REQUIRE(gcr::create_symlinks(
              *root,
              {"libx.so.1.2::/usr/lib/real/libx.so.1", "liba.so.1::/usr/lib/real/liba.so",
               "liby.so.1.2::/usr/lib/real/liby.so.1", "one::/opt/a/first",
               "libx.so.1::/usr/lib/real/libx.so", "two::/opt/a/second"},
              &wrote)
              .ok());
  CHECK(wrote);
  CHECK(link_at("/usr/lib/real/libx.so.1") == "libx.so.1.2");
  CHECK(link_at("/usr/lib/real/libx.so") == "libx.so.1");
  CHECK(link_at("/usr/lib/real/liba.so") == "liba.so.1");
  CHECK(link_at("/usr/lib/real/liby.so.1") == "liby.so.1.2");  // replaced
  CHECK(link_at("/opt/a/first") == "one");
  CHECK(link_at("/opt/a/second") == "two");
  // A directory at the name is not replaced, and no temporary name is left beside it.
  gcr::test::make_dirs(tree.rootfs + "/usr/lib/real/dir/inside");
  CHECK_FALSE(gcr::create_symlinks(*root, {"x::/usr/lib/real/dir"}, &wrote).ok());
  CHECK(gcr::test::exists(tree.rootfs + "/usr/lib/real/dir/inside"));
  for (const auto& e : std::filesystem::directory_iterator(tree.rootfs + "/usr/lib/real"))
    CHECK(e.path().filename().string().find(".tmp") == std::string::npos);
}

TEST_CASE("known_directory: a directory reached without a symlink, a missing one, else unknown") {
  HostileTree tree;
  auto root = gcr::RootFs::open(tree.rootfs);
  REQUIRE(root.ok());
  gcr::ResolvedDirs known;
  const auto real = root->known_directory("/usr/lib/real", known);
  REQUIRE(real.has_value());
  REQUIRE(*real != nullptr);
  CHECK(fd_path(**real) == tree.rootfs + "/usr/lib/real");
  const auto missing = root->known_directory("/usr/lib/none/deeper", known);
  REQUIRE(missing.has_value());
  CHECK(*missing == nullptr);
  // Through a link (to the root itself), to the host, or a file: the caller resolves it.
  CHECK_FALSE(root->known_directory("/usr/lib64/usr", known).has_value());
  CHECK_FALSE(root->known_directory("/abs", known).has_value());
  CHECK_FALSE(root->known_directory("/usr/lib/real/libx.so", known).has_value());
  // directory_in opens what known_directory cannot tell, once, inside the root.
  const auto through = root->directory_in("/usr/lib64/usr", known);
  REQUIRE(through.ok());
  REQUIRE(*through != nullptr);
  CHECK(fd_path(**through) == tree.rootfs + "/usr");
  CHECK(*root->directory_in("/usr/lib64/usr", known) == *through);
  CHECK(*root->directory_in("/usr/lib/real", known) == *real);
  CHECK(*root->directory_in("/usr/lib64/nowhere", known) == nullptr);
  // A link made where a directory was missing: forgotten, then found to be a link.
  make_symlink("/opt", tree.rootfs + "/usr/lib/none");
  known.forget_what_writes_change();
  CHECK_FALSE(root->known_directory("/usr/lib/none/deeper", known).has_value());
  CHECK(*root->known_directory("/usr/lib/real", known) == *real);  // kept, the same fd
  CHECK(*root->directory_in("/usr/lib64/nowhere", known) == nullptr);
  // A directory made where one was missing: forgotten, then found.
  REQUIRE(root->known_directory("/usr/lib/made", known).has_value());
  gcr::test::make_dirs(tree.rootfs + "/usr/lib/made");
  REQUIRE(root->known_directory("/usr/lib/made", known).has_value());
  CHECK(*root->known_directory("/usr/lib/made", known) == nullptr);  // remembered missing
  known.forget_what_writes_change();
  const auto made = root->known_directory("/usr/lib/made", known);
  REQUIRE(made.has_value());
  REQUIRE(*made != nullptr);
  CHECK(fd_path(**made) == tree.rootfs + "/usr/lib/made");
}

TEST_CASE("PathParts: a path's clean prefixes and components, `..` refused") {
  const auto parts = gcr::PathParts::of("//usr/./lib//x86_64-linux-gnu/");
  REQUIRE(parts.ok());
  REQUIRE(parts->size() == 3);
  CHECK(parts->prefix(0) == "/");
  CHECK(parts->prefix(1) == "/usr");
  CHECK(parts->prefix(3) == "/usr/lib/x86_64-linux-gnu");
  CHECK(parts->part(0) == "usr");
  CHECK(parts->part(2) == "x86_64-linux-gnu");
  const auto root = gcr::PathParts::of("/");
  REQUIRE(root.ok());
  CHECK(root->size() == 0);
  CHECK(root->prefix(0) == "/");
  CHECK_FALSE(gcr::PathParts::of("/usr/../etc").ok());
}

TEST_CASE("listing_in and link_target_in read once until a write is noted, inside the root") {
  HostileTree tree;
  auto root = gcr::RootFs::open(tree.rootfs);
  REQUIRE(root.ok());
  gcr::ResolvedDirs known;
  gcr::ImageBudget budget;
  write_file(tree.rootfs + "/usr/lib/real/libone.so.1", "x");
  REQUIRE(::symlink("libone.so.1", (tree.rootfs + "/usr/lib/real/libone.so").c_str()) == 0);
  const auto first = root->listing_in("/usr/lib/real", known, budget);
  REQUIRE(first.ok());
  REQUIRE(*first != nullptr);
  const auto names = [](const std::vector<gcr::DirEntry>& entries) {
    std::vector<std::string> out;
    for (const auto& e : entries) out.push_back(e.name);
    return out;
  };
  const auto before = names(**first);
  CHECK(std::find(before.begin(), before.end(), "libone.so.1") != before.end());
  // Read once: a name made since is not seen until the write is noted.
  write_file(tree.rootfs + "/usr/lib/real/libtwo.so.1", "x");
  CHECK(*root->listing_in("/usr/lib/real", known, budget) == *first);
  CHECK(names(**root->listing_in("/usr/lib/real", known, budget)) == before);
  CHECK(*root->listing_in("/usr/lib/none", known, budget) == nullptr);
  CHECK(root->link_target_in("/usr/lib/real/libone.so", known) == "libone.so.1");
  CHECK_FALSE(root->link_target_in("/usr/lib/real/libone.so.1", known));  // a file
  // The listing answers for its directory: a link made since is not seen either.
  REQUIRE(::symlink("libtwo.so.1", (tree.rootfs + "/usr/lib/real/libtwo.so").c_str()) == 0);
  CHECK_FALSE(root->link_target_in("/usr/lib/real/libtwo.so", known));
  CHECK_FALSE(root->link_target_in("/usr/lib/none/libx.so", known));
  // /abs links to a host directory: resolved inside the root, where it is missing, the host's
  // own link there is not read.
  make_symlink("host-target", tree.outside + "/libx.so");
  CHECK_FALSE(root->link_target_in("/abs/libx.so", known));
  known.forget_what_writes_change();
  const auto after = names(**root->listing_in("/usr/lib/real", known, budget));
  CHECK(std::find(after.begin(), after.end(), "libtwo.so.1") != after.end());
  CHECK(std::find(after.begin(), after.end(), "libone.so") != after.end());
  CHECK(root->link_target_in("/usr/lib/real/libtwo.so", known) == "libtwo.so.1");
}

TEST_CASE("canonical names a path as runc resolves a mount destination, inside the root") {
  for (const auto resolver : {gcr::Resolver::kAuto, gcr::Resolver::kFallback}) {
    HostileTree tree;
    auto root = gcr::RootFs::open(tree.rootfs, resolver);
    REQUIRE(root.ok());
    const auto canonical = [&](const std::string& path) {
      auto c = root->canonical(path);
      return c ? *c : "error: " + c.error().message;
    };
    CHECK(canonical("/") == "/");
    CHECK(canonical("/usr/lib/real/libx.so") == "/usr/lib/real/libx.so");
    CHECK(canonical("//usr/./lib/real/") == "/usr/lib/real");
    CHECK(canonical("/usr/lib/real/missing/deeper") == "/usr/lib/real/missing/deeper");
    CHECK(canonical("/usr/lib64/usr/lib/real") == "/usr/lib/real");  // lib64 -> /
    CHECK(canonical("/usr/lib/up/usr/lib/real") == "/usr/lib/real");
    // Links to host paths point at nothing inside the root: runc would create their targets
    // there, which is not known now.
    CHECK(canonical("/abs/canary").find("/abs is a dangling symlink") != std::string::npos);
    CHECK(canonical("/climb/canary").find("/climb is a dangling symlink") != std::string::npos);
    make_dirs(tree.rootfs + tree.outside);
    CHECK(canonical("/abs/canary") == tree.outside + "/canary");  // absolute: in the root
    CHECK(canonical("/usr/../etc").rfind("error: ", 0) == 0);
    make_symlink("/etc/missing.conf", tree.rootfs + "/dangling");
    CHECK(canonical("/dangling").find("dangling symlink") != std::string::npos);
    CHECK(canonical("/loop-a").rfind("error: ", 0) == 0);
  }
}
