// gpu-ctk hook update-libraries / update-ldcache / create-symlinks run directly with a synthetic
// OCI state on stdin, against hostile rootfs trees; each case also runs with openat2 disabled
// (seccomp) so the fallback resolver passes the same checks. Needs root (ldconfig pivots into the
// rootfs).
#include <doctest/doctest.h>

#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/filesystem.hpp>

#include "hooks/ldconfig_sandbox.h"
#include "shim_fixture.h"
#include "sim_host.h"

using gcr::Json;
using gcr::test::make_symlink;
using gcr::test::TempDir;
using gcr::test::write_file;

namespace {

using gcr::test::kVersion;
using gcr::test::require_root;

constexpr const char* kSandboxNeedsRoot = "the ldconfig sandbox needs root";

// A bundle with a glibc rootfs and an injected library in /usr/lib64, plus a canary tree
// outside the rootfs that the image's symlinks point at.
struct HookBed {
  TempDir t;
  std::string bundle = t / "bundle";
  std::string rootfs = t / "bundle/rootfs";
  std::string outside = t / "outside";

  HookBed() {
    gcr::test::make_glibc_rootfs(bundle);
    write_file(bundle + "/config.json", R"({"ociVersion":"1.0.2","root":{"path":"rootfs"}})");
    const std::string lib = rootfs + "/usr/lib64/libcuda.so." + kVersion;
    gcr::test::make_dirs(rootfs + "/usr/lib64");
    boost::filesystem::copy_file(std::string(GCR_STUB_DIR) + "/lib64/libcuda.so." + kVersion, lib);
    write_file(outside + "/canary", "canary");
    gcr::test::make_dirs(outside + "/etc/ld.so.conf.d");
  }

  // gpu-ctk linked as nvidia-cdi-hook, NVIDIA's CDI specs' hook program.
  [[nodiscard]] std::string nvidia_cdi_hook() const {
    const std::string program = t / "bin/nvidia-cdi-hook";
    if (!gcr::test::exists(program)) make_symlink(gcr::test::built("gpu-ctk"), program);
    return program;
  }
  // A run of a hook program given this bed's state on stdin.
  [[nodiscard]] gcr::test::RunOptions with_state() const {
    gcr::test::RunOptions options;
    options.stdin_text = state();
    return options;
  }

  [[nodiscard]] std::string state() const {
    return Json{{"ociVersion", "1.0.2"},
                {"id", "c"},
                {"status", "creating"},
                {"pid", 1},
                {"bundle", bundle}}
        .dump();
  }

  gcr::test::ProcessResult hook(const std::vector<std::string>& args, bool no_openat2 = false,
                                const std::optional<std::string>& state_text = std::nullopt) const {
    std::vector<std::string> argv{gcr::test::built("gpu-ctk"), "hook"};
    argv.insert(argv.end(), args.begin(), args.end());
    if (no_openat2) argv.insert(argv.begin(), gcr::test::built("no-openat2"));
    gcr::test::RunOptions options;
    options.stdin_text = state_text.value_or(state());
    return gcr::test::run(argv, options);
  }

  gcr::test::ProcessResult update_ldcache(bool no_openat2 = false) const {
    return hook({"update-ldcache", "--ldconfig-path", "@/sbin/ldconfig", "--folder", "/usr/lib64"},
                no_openat2);
  }
  gcr::test::ProcessResult create_symlink(bool no_openat2 = false) const {
    return hook({"create-symlinks", "--link", "libcuda.so.1::/usr/lib64/libcuda.so"}, no_openat2);
  }

  // Every file under `outside` with its content: must not change.
  [[nodiscard]] std::string outside_listing() const {
    return gcr::test::run({"/bin/sh", "-c", "cd " + outside + " && find . | sort && cat canary"})
        .out;
  }

  [[nodiscard]] std::string cache_listing() const {
    return gcr::test::run({"/sbin/ldconfig", "-p", "-C", rootfs + "/etc/ld.so.cache"}).out;
  }
  // The listing without its first line, which names the file.
  [[nodiscard]] std::string cache_entries() const {
    const std::string listing = cache_listing();
    return listing.substr(listing.find('\n') + 1);
  }
};

// The container's /dev as runc has made it when createContainer hooks run: a tmpfs over the
// rootfs' folder, unmounted with the object.
struct ContainerDev {
  explicit ContainerDev(const std::string& rootfs) : path(rootfs + "/dev") {
    gcr::test::make_dirs(path);
    REQUIRE(::mount("tmpfs", path.c_str(), "tmpfs", 0, "size=1m,mode=755") == 0);
  }
  ~ContainerDev() { ::umount2(path.c_str(), MNT_DETACH); }
  ContainerDev(const ContainerDev&) = delete;
  ContainerDev& operator=(const ContainerDev&) = delete;
  std::string path;
};

// NVIDIA's hook program run by runc with the container's /dev made: the bed, the program and
// its state on stdin.
struct NvidiaHookInDev {
  HookBed bed;
  std::string program = bed.nvidia_cdi_hook();
  gcr::test::RunOptions options = bed.with_state();
  ContainerDev container_dev{bed.rootfs};
};

}  // namespace

TEST_CASE("update-ldcache indexes the folders through a drop-in; re-running is harmless") {
  require_root(kSandboxNeedsRoot);
  for (bool no_openat2 : {false, true}) {
    CAPTURE(no_openat2);
    HookBed bed;
    auto r = bed.update_ldcache(no_openat2);
    REQUIRE(r.err == "");
    REQUIRE(r.exit_code == 0);
    CHECK(bed.cache_listing().find("libcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1") !=
          std::string::npos);
    CHECK(gcr::test::read_file(bed.rootfs + "/etc/ld.so.conf.d/00-gpu-container-runtime.conf")
              .find("\n/usr/lib64\n") != std::string::npos);
    const std::string before = bed.cache_listing();
    REQUIRE(bed.update_ldcache(no_openat2).exit_code == 0);
    CHECK(bed.cache_listing() == before);
    CHECK(gcr::test::run({"/bin/ls", "-A", bed.rootfs + "/etc/ld.so.conf.d"}).out ==
          "00-gpu-container-runtime.conf\nx86_64-linux-gnu.conf\n");
  }
}

// update-libraries knows the links it made: the one to a soname link ldconfig makes
// (libcuda.so -> libcuda.so.1) is indexed as ldconfig's second run indexes it. update-ldcache
// alone runs ldconfig once, as NVIDIA's does (NVIDIA's specs make the soname links too).
TEST_CASE("update-libraries makes the links and the cache in one run, as the two hooks do") {
  require_root(kSandboxNeedsRoot);
  for (bool no_openat2 : {false, true}) {
    CAPTURE(no_openat2);
    HookBed one;
    auto r = one.hook({"update-libraries", "--ldconfig-path", "@/sbin/ldconfig", "--folder",
                       "/usr/lib64", "--link", "libcuda.so.1::/usr/lib64/libcuda.so"},
                      no_openat2);
    REQUIRE(r.err == "");
    REQUIRE(r.exit_code == 0);
    HookBed two;
    REQUIRE(two.create_symlink(no_openat2).exit_code == 0);
    REQUIRE(two.update_ldcache(no_openat2).exit_code == 0);
    CHECK(one.cache_listing().find("libcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1") !=
          std::string::npos);
    const std::string dev_link = "\tlibcuda.so (libc6,x86-64) => /usr/lib64/libcuda.so\n";
    std::string indexed = one.cache_entries();
    const auto at = indexed.find(dev_link);
    CHECK(at != std::string::npos);
    if (at != std::string::npos) indexed.erase(at, dev_link.size());
    CHECK(indexed == two.cache_entries());
    for (const char* link : {"/usr/lib64/libcuda.so", "/usr/lib64/libcuda.so.1"}) {
      CAPTURE(link);
      CHECK(boost::filesystem::read_symlink(one.rootfs + link) ==
            boost::filesystem::read_symlink(two.rootfs + link));
    }
    CHECK(boost::filesystem::read_symlink(one.rootfs + "/usr/lib64/libcuda.so") == "libcuda.so.1");
  }
  HookBed bad;
  const auto r = bad.hook({"update-libraries", "--ldconfig-path", "@/sbin/ldconfig", "--folder",
                           "/usr/lib64", "--link", "libcuda.so.1::../escape"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind("gpu-ctk hook update-libraries: link `../escape` must be", 0) == 0);
  CHECK_FALSE(
      boost::filesystem::exists(bad.rootfs + "/etc/ld.so.conf.d/00-gpu-container-runtime.conf"));
}

TEST_CASE("update-ldcache creates /etc/ld.so.conf with an include when the image has none") {
  require_root(kSandboxNeedsRoot);
  HookBed bed;
  REQUIRE(::unlink((bed.rootfs + "/etc/ld.so.conf").c_str()) == 0);
  REQUIRE(bed.update_ldcache().exit_code == 0);
  CHECK(gcr::test::read_file(bed.rootfs + "/etc/ld.so.conf") ==
        "include /etc/ld.so.conf.d/*.conf\n");
  CHECK(bed.cache_listing().find("libcuda.so.1") != std::string::npos);
}

TEST_CASE("create-symlinks: created, idempotent, stale links replaced, bad link paths refused") {
  require_root(kSandboxNeedsRoot);
  for (bool no_openat2 : {false, true}) {
    CAPTURE(no_openat2);
    HookBed bed;
    const std::string link = bed.rootfs + "/usr/lib64/libcuda.so";
    REQUIRE(bed.create_symlink(no_openat2).exit_code == 0);
    CHECK(gcr::test::run({"/bin/readlink", link}).out == "libcuda.so.1\n");
    struct stat first {};
    REQUIRE(::lstat(link.c_str(), &first) == 0);
    REQUIRE(bed.create_symlink(no_openat2).exit_code == 0);
    struct stat second {};
    REQUIRE(::lstat(link.c_str(), &second) == 0);
    CHECK(first.st_ino == second.st_ino);
    REQUIRE(::unlink(link.c_str()) == 0);
    make_symlink("libcuda.so.470", link);
    REQUIRE(bed.create_symlink(no_openat2).exit_code == 0);
    CHECK(gcr::test::run({"/bin/readlink", link}).out == "libcuda.so.1\n");
    for (const std::string bad :
         {"x::relative/link", "x::/usr/../../etc/passwd", "x::/", "no-separator"}) {
      CAPTURE(bad);
      const auto r = bed.hook({"create-symlinks", "--link", bad}, no_openat2);
      CHECK(r.exit_code == 1);
      CHECK(r.err.rfind("gpu-ctk hook create-symlinks: ", 0) == 0);
    }
  }
}

TEST_CASE("as nvidia-cdi-hook, NVIDIA's CDI specs' hook program: the same hooks, NVIDIA's flags") {
  require_root(kSandboxNeedsRoot);
  HookBed bed;
  const std::string program = bed.nvidia_cdi_hook();
  const auto options = bed.with_state();
  // As NVIDIA's generated specs call it (createContainer hooks, args[0] the program's name).
  const auto links = gcr::test::run(
      {program, "create-symlinks", "--link", "libcuda.so.1::/usr/lib64/libcuda.so"}, options);
  CHECK_MESSAGE(links.exit_code == 0, links.err);
  CHECK(gcr::test::run({"/bin/readlink", bed.rootfs + "/usr/lib64/libcuda.so"}).out ==
        "libcuda.so.1\n");
  const auto cache = gcr::test::run(
      {program, "update-ldcache", "--ldconfig-path", "@/sbin/ldconfig", "--folder", "/usr/lib64"},
      options);
  CHECK_MESSAGE(cache.exit_code == 0, cache.err);
  CHECK(bed.cache_listing().find("libcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1") !=
        std::string::npos);
  // A hook it does not know is a warning, as for gpu-ctk hook: the container still starts.
  const auto unknown = gcr::test::run({program, "update-later-version-thing"}, options);
  CHECK(unknown.exit_code == 0);
  CHECK(unknown.err.find("unknown hook `update-later-version-thing`") != std::string::npos);
}

// NVIDIA's specs may still carry chmod (crun's rootless /dev/dri): runc has made the container's
// /dev, a tmpfs, when createContainer hooks run.
TEST_CASE(
    "chmod, as NVIDIA's specs call it: the mode in the container's /dev; no symlink followed") {
  require_root(kSandboxNeedsRoot);
  NvidiaHookInDev nv;
  const HookBed& bed = nv.bed;
  const std::string& program = nv.program;
  const auto& options = nv.options;
  const std::string& dev = nv.container_dev.path;
  REQUIRE(::mkdir((dev + "/dri").c_str(), 0700) == 0);
  const auto mode_of = [](const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
  };
  const auto r = gcr::test::run(
      {program, "chmod", "--mode", "755", "--path", "/dev/dri", "--path", "/dev/missing"}, options);
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(mode_of(dev + "/dri") == 0755);
  // A symlink, here to the image's /etc, is never followed: NVIDIA's hook followed it on the host.
  make_symlink("/etc", bed.rootfs + "/usr/etc-link");
  const auto etc = mode_of(bed.rootfs + "/etc");
  const auto link =
      gcr::test::run({program, "chmod", "--mode", "777", "--path", "/usr/etc-link"}, options);
  CHECK(link.exit_code == 1);
  CHECK(link.err.rfind("gpu-ctk hook chmod: cannot change the mode of /usr/etc-link: ", 0) == 0);
  CHECK(mode_of(bed.rootfs + "/etc") == etc);
  const auto bad =
      gcr::test::run({program, "chmod", "--mode", "u+x", "--path", "/dev/dri"}, options);
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == "gpu-ctk hook chmod: --mode `u+x` is no octal mode\n");
  // A kernel without openat2: the path opened one name at a time, no symlink followed.
  const auto old_kernel = gcr::test::run(
      {gcr::test::built("no-openat2"), program, "chmod", "--mode", "700", "--path", "/dev/dri"},
      options);
  CHECK(old_kernel.err == "");
  CHECK(old_kernel.exit_code == 0);
  CHECK(mode_of(dev + "/dri") == 0700);
  const auto old_link = gcr::test::run({gcr::test::built("no-openat2"), program, "chmod", "--mode",
                                        "777", "--path", "/usr/etc-link"},
                                       options);
  CHECK(old_link.exit_code == 1);
  CHECK(mode_of(bed.rootfs + "/etc") == etc);
}

// NVIDIA's generated specs link each GPU's DRM nodes by bus in the container's /dev, runc's
// tmpfs when createContainer hooks run.
TEST_CASE("create-symlinks, as NVIDIA's specs call it: /dev/dri/by-path in the container's /dev") {
  require_root(kSandboxNeedsRoot);
  NvidiaHookInDev nv;
  const HookBed& bed = nv.bed;
  const std::string& program = nv.program;
  const auto& options = nv.options;
  const std::string& dev = nv.container_dev.path;
  REQUIRE(::mkdir((dev + "/dri").c_str(), 0755) == 0);
  const auto r = gcr::test::run(
      {program, "create-symlinks", "--link", "../card1::/dev/dri/by-path/pci-0000:3b:00.0-card",
       "--link", "../renderD128::/dev/dri/by-path/pci-0000:3b:00.0-render"},
      options);
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(gcr::test::run({"/bin/readlink", dev + "/dri/by-path/pci-0000:3b:00.0-card"}).out ==
        "../card1\n");
  CHECK(gcr::test::run({"/bin/readlink", dev + "/dri/by-path/pci-0000:3b:00.0-render"}).out ==
        "../renderD128\n");
  // No symlink on the way is followed: here one to the image's /etc.
  make_symlink("/etc", dev + "/etc-link");
  const auto link =
      gcr::test::run({program, "create-symlinks", "--link", "x::/dev/etc-link/y"}, options);
  CHECK(link.exit_code == 1);
  CHECK_FALSE(boost::filesystem::is_symlink(bed.rootfs + "/etc/y"));
}

TEST_CASE("hostile images: links to host paths or climbing out change nothing outside the rootfs") {
  require_root(kSandboxNeedsRoot);
  struct Case {
    const char* name;
    std::function<void(const HookBed&)> plant;
  };
  const std::vector<Case> cases = {
      {"etc -> absolute host dir",
       [](const HookBed& b) {
         boost::filesystem::remove_all(b.rootfs + "/etc");
         make_symlink(b.outside + "/etc", b.rootfs + "/etc");
       }},
      {"etc/ld.so.conf.d climbs out",
       [](const HookBed& b) {
         boost::filesystem::remove_all(b.rootfs + "/etc/ld.so.conf.d");
         make_symlink("../../../../../../../../../" + b.outside.substr(1) + "/etc/ld.so.conf.d",
                      b.rootfs + "/etc/ld.so.conf.d");
       }},
      {"etc/ld.so.cache -> host file",
       [](const HookBed& b) {
         ::unlink((b.rootfs + "/etc/ld.so.cache").c_str());
         make_symlink(b.outside + "/canary", b.rootfs + "/etc/ld.so.cache");
       }},
      {"library dir -> /",
       [](const HookBed& b) {
         boost::filesystem::remove_all(b.rootfs + "/usr/lib64");
         make_symlink("/", b.rootfs + "/usr/lib64");
       }},
      {"usr/lib climbs out",
       [](const HookBed& b) {
         boost::filesystem::remove_all(b.rootfs + "/usr/lib64");
         make_symlink("../../../../../../../../../" + b.outside.substr(1), b.rootfs + "/usr/lib64");
       }},
  };
  for (bool no_openat2 : {false, true}) {
    for (const auto& c : cases) {
      CAPTURE(no_openat2);
      CAPTURE(c.name);
      HookBed bed;
      c.plant(bed);
      const std::string before = bed.outside_listing();
      (void)bed.create_symlink(no_openat2);
      (void)bed.update_ldcache(no_openat2);
      CHECK(bed.outside_listing() == before);
    }
  }
}

TEST_CASE("ldconfig is a host binary: container paths and dynamically linked ones are refused") {
  require_root(kSandboxNeedsRoot);
  HookBed bed;
  const std::string marker = bed.t / "ldconfig-ran";
  write_file(bed.rootfs + "/sbin/ldconfig", "#!/bin/sh\ntouch " + marker + "\n", 0755);
  auto r =
      bed.hook({"update-ldcache", "--ldconfig-path", "/sbin/ldconfig", "--folder", "/usr/lib64"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("must be '@' and a host path") != std::string::npos);
  r = bed.hook({"update-ldcache", "--ldconfig-path", "@/bin/ls", "--folder", "/usr/lib64"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("dynamically linked") != std::string::npos);
  CHECK_FALSE(gcr::test::exists(marker));
}

TEST_CASE("bad state and odd files fail fast with one line; unknown hooks and flags are warnings") {
  require_root(kSandboxNeedsRoot);
  HookBed bed;
  auto r =
      bed.hook({"update-ldcache", "--folder", "/usr/lib64"}, false, std::string("{\"bundle\": "));
  CHECK(r.exit_code == 1);
  CHECK(r.err.rfind("gpu-ctk hook update-ldcache: invalid container state: not valid JSON", 0) ==
        0);
  r = bed.hook({"create-symlinks"}, false, std::string(R"({"ociVersion":"1.0.2"})"));
  CHECK(r.err == "gpu-ctk hook create-symlinks: invalid container state: no bundle\n");
  REQUIRE(::unlink((bed.bundle + "/config.json").c_str()) == 0);
  REQUIRE(::mkfifo((bed.bundle + "/config.json").c_str(), 0644) == 0);
  r = bed.create_symlink();
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("is not a regular file") != std::string::npos);
  gcr::test::RunOptions zero;
  zero.stdin_path = "/dev/zero";
  r = gcr::test::run({gcr::test::built("gpu-ctk"), "hook", "create-symlinks"}, zero);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("larger than") != std::string::npos);
  r = bed.hook({"enable-future-feature", "--x"});
  CHECK(r.exit_code == 0);
  CHECK(r.err == "gpu-ctk hook: warning: unknown hook `enable-future-feature`: nothing done\n");
  HookBed fresh;
  r = fresh.hook(
      {"create-symlinks", "--new-flag", "--link", "libcuda.so.1::/usr/lib64/libcuda.so"});
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("warning: ignoring unknown argument `--new-flag`") != std::string::npos);
  CHECK(gcr::test::exists(fresh.rootfs + "/usr/lib64/libcuda.so"));
  // As NVIDIA's command line reads them: an empty value (`--x=`) is a value, and of a flag
  // given twice the last counts; both were refused.
  HookBed spelled;
  r = spelled.hook({"update-libraries", "--future=", "--ldconfig-path", "@/nonexistent",
                    "--ldconfig-path", "@/sbin/ldconfig", "--link",
                    "libcuda.so.1::/usr/lib64/libcuda.so",
                    "--link=libcuda.so.1::/usr/lib64/odd=", "--folder", "/usr/lib64"});
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("warning: ignoring unknown argument `--future=`") != std::string::npos);
  CHECK(gcr::test::exists(spelled.rootfs + "/usr/lib64/libcuda.so"));
  CHECK(boost::filesystem::is_symlink(spelled.rootfs + "/usr/lib64/odd="));  // a value's own `=`
  CHECK(spelled.cache_listing().find("libcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1") !=
        std::string::npos);
}

TEST_CASE("--help after a hook name prints the usage without reading the state") {
  gcr::test::RunOptions tty_like;
  tty_like.stdin_path = "/dev/zero";
  const auto r =
      gcr::test::run({gcr::test::built("gpu-ctk"), "hook", "update-ldcache", "--help"}, tty_like);
  CHECK(r.exit_code == 0);
  CHECK(r.err == "");
  CHECK(r.out.rfind("usage: gpu-ctk hook update-ldcache", 0) == 0);
}

TEST_CASE("the state's root field wins over config.json") {
  require_root(kSandboxNeedsRoot);
  HookBed bed;
  TempDir other;
  gcr::test::make_dirs(other / "usr/lib64");
  const std::string state = Json{{"bundle", bed.bundle}, {"root", other.path()}}.dump();
  REQUIRE(
      bed.hook({"create-symlinks", "--link", "libcuda.so.1::/usr/lib64/libcuda.so"}, false, state)
          .exit_code == 0);
  CHECK(gcr::test::exists(other / "usr/lib64/libcuda.so"));
  CHECK_FALSE(gcr::test::exists(bed.rootfs + "/usr/lib64/libcuda.so"));
}

TEST_CASE(
    "ldconfig's sandbox: pivoted, /proc and /sys covered, empty env, file capabilities only") {
  require_root(kSandboxNeedsRoot);
  HookBed bed;
  // Without a cache of its own the image's loader cache is ldconfig's work.
  REQUIRE(::unlink((bed.rootfs + "/etc/ld.so.cache").c_str()) == 0);
  REQUIRE(::mount("proc", (bed.rootfs + "/proc").c_str(), "proc", 0, nullptr) == 0);
  const auto r = bed.hook({"update-ldcache", "--ldconfig-path",
                           "@" + gcr::test::built("sandbox-probe"), "--folder", "/usr/lib64"});
  ::umount2((bed.rootfs + "/proc").c_str(), MNT_DETACH);
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  // 1 CAP_DAC_OVERRIDE, 2 CAP_DAC_READ_SEARCH, 3 CAP_FOWNER; the report landed in the rootfs.
  CHECK(gcr::test::read_file(bed.rootfs + "/etc/ld.so.cache") ==
        "proc=0 sys=0 env=0 nnp=1 caps=1,2,3, argv=ldconfig -f /etc/ld.so.conf -C /etc/ld.so.cache "
        "/usr/lib64\n");
}

TEST_CASE("ldconfig's sandbox: an ldconfig that never ends is killed at the time limit") {
  require_root(kSandboxNeedsRoot);
  HookBed bed;
  const gcr::Status s = gcr::run_ldconfig_in_rootfs(
      gcr::LdconfigJob{gcr::test::built("sandbox-probe"), bed.rootfs, {"/hang"}, 1});
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message ==
        "cannot run ldconfig: timed out after 1s (" + gcr::test::built("sandbox-probe") + ")");
  const gcr::Status quick = gcr::run_ldconfig_in_rootfs(
      gcr::LdconfigJob{gcr::test::built("sandbox-probe"), bed.rootfs, {"/usr/lib64"}, 1});
  CHECK(quick.ok());
}

TEST_CASE("paths never cross into another mount inside the rootfs (a volume)") {
  require_root(kSandboxNeedsRoot);
  for (bool no_openat2 : {false, true}) {
    CAPTURE(no_openat2);
    HookBed bed;
    TempDir volume;
    gcr::test::make_dirs(bed.rootfs + "/vol");
    REQUIRE(::mount("tmpfs", (bed.rootfs + "/vol").c_str(), "tmpfs", 0, "size=1m") == 0);
    boost::filesystem::remove_all(bed.rootfs + "/etc/ld.so.conf.d");
    make_symlink("/vol/confd", bed.rootfs + "/etc/ld.so.conf.d");
    const auto r = bed.update_ldcache(no_openat2);
    const bool wrote_into_volume = gcr::test::exists(bed.rootfs + "/vol/confd");
    ::umount2((bed.rootfs + "/vol").c_str(), MNT_DETACH);
    CHECK(r.exit_code == 1);
    CHECK(r.err.find("Invalid cross-device link") != std::string::npos);
    CHECK_FALSE(wrote_into_volume);
  }
}

// The image names a folder where a volume is mounted (runc has mounted it when the hook runs):
// the in-process update does not cross into it, and ldconfig, run as root in its sandbox, may
// read it but not write there (its links would be made in the pod's volume).
TEST_CASE("ldconfig's sandbox: a volume the image's ld.so.conf names is read, never written") {
  require_root(kSandboxNeedsRoot);
  HookBed bed;
  const std::string volume = bed.rootfs + "/vol";
  gcr::test::make_dirs(volume);
  REQUIRE(::mount("tmpfs", volume.c_str(), "tmpfs", 0, "size=64m") == 0);
  gcr::test::make_dirs(volume + "/lib");
  write_file(volume + "/lib/libcuda.so." + kVersion,
             gcr::test::read_file(std::string(GCR_STUB_DIR) + "/lib64/libcuda.so." + kVersion));
  write_file(bed.rootfs + "/etc/ld.so.conf.d/vol.conf", "/vol/lib\n");
  const auto r = bed.update_ldcache();
  const auto listing = gcr::test::run({"/bin/ls", "-A", volume + "/lib"}).out;
  const auto cache = bed.cache_listing();
  ::umount2(volume.c_str(), MNT_DETACH);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(listing == "libcuda.so." + kVersion + "\n");
  CHECK(cache.find("libcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1") != std::string::npos);
}

TEST_CASE("a host ldconfig wrapped by a script is used through ldconfig.real") {
  require_root(kSandboxNeedsRoot);
  HookBed bed;
  write_file(bed.t / "sbin/ldconfig", "#!/bin/sh\nexec /sbin/ldconfig \"$@\"\n", 0755);
  boost::filesystem::copy_file("/sbin/ldconfig", bed.t / "sbin/ldconfig.real");
  const auto r = bed.hook({"update-ldcache", "--ldconfig-path", "@" + bed.t / "sbin/ldconfig",
                           "--folder", "/usr/lib64"});
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(bed.cache_listing().find("libcuda.so.1") != std::string::npos);
}
