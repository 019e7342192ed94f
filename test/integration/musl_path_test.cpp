// An image whose loader is musl's (Alpine; gcompat runs glibc programs such as nvidia-smi there)
// reads no /etc/ld.so.cache: the library hooks write the folders into musl's
// /etc/ld-musl-<arch>.path, and musl's own loader (Debian's musl package) then finds the
// driver's libraries by name. Needs root (the hook's ldconfig pivots into the rootfs; chroot).
#include <doctest/doctest.h>

#include <unistd.h>

#include <boost/filesystem.hpp>

#include "hooks/libraries_at_create.h"
#include "hooks/rootfs.h"
#include "shim_fixture.h"
#include "sim_host.h"

using gcr::Json;
using gcr::test::TempDir;

namespace {

using gcr::test::kVersion;

constexpr const char* kDebianMusl = "/lib/x86_64-linux-musl/libc.so";  // Debian's musl
constexpr const char* kMuslPath = "/etc/ld-musl-x86_64.path";
constexpr const char* kMuslPath32 = "/etc/ld-musl-i386.path";
const std::string kMuslFolder = "/usr/lib/x86_64-linux-gnu";
const std::string kMuslFolder32 = "/usr/lib/i386-linux-gnu";

// A rootfs with the driver's 64- and 32-bit libcuda copied into the folders (as the mounts put
// them there) and no loader cache, as Alpine has none; `musl`: with musl's loader.
struct MuslBed {
  TempDir t;
  std::string bundle = t / "bundle";
  std::string rootfs = t / "bundle/rootfs";

  explicit MuslBed(bool musl) {
    gcr::test::make_dirs(rootfs + "/etc");
    gcr::test::make_dirs(rootfs + "/lib");
    gcr::test::write_file(bundle + "/config.json",
                          R"({"ociVersion":"1.0.2","root":{"path":"rootfs"}})");
    for (const auto& [bits, folder] : {std::pair{"lib64", kMuslFolder}, {"lib32", kMuslFolder32}}) {
      gcr::test::make_dirs(rootfs + folder);
      boost::filesystem::copy_file(
          std::string(GCR_STUB_DIR) + "/" + bits + "/libcuda.so." + kVersion,
          rootfs + folder + "/libcuda.so." + kVersion);
    }
    if (musl) copy(kDebianMusl, "/lib/ld-musl-x86_64.so.1");
  }

  void copy(const std::string& from, const std::string& to) const {
    boost::filesystem::copy_file(from, rootfs + to,
                                 boost::filesystem::copy_options::overwrite_existing);
  }

  [[nodiscard]] gcr::test::ProcessResult update_libraries(
      const std::vector<std::string>& folders) const {
    std::vector<std::string> argv{gcr::test::built("gpu-ctk"), "hook", "update-libraries",
                                  "--ldconfig-path", "@/sbin/ldconfig"};
    for (const auto& f : folders) argv.insert(argv.end(), {"--folder", f});
    argv.insert(argv.end(), {"--link", "libcuda.so.1::" + kMuslFolder + "/libcuda.so"});
    gcr::test::RunOptions options;
    options.stdin_text =
        Json{{"ociVersion", "1.0.2"}, {"id", "c"}, {"pid", 1}, {"bundle", bundle}}.dump();
    return gcr::test::run(argv, options);
  }

  [[nodiscard]] std::string read(const std::string& path) const {
    return gcr::test::exists(rootfs + path) ? gcr::test::read_file(rootfs + path) : "(none)";
  }
};

const std::string kMuslDefault = "/lib\n/usr/local/lib\n/usr/lib\n";

}  // namespace

TEST_CASE("a musl image gets the folders in /etc/ld-musl-x86_64.path, where its loader looks") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the hook's ldconfig and chroot need root");
  REQUIRE_MESSAGE(gcr::test::exists(kDebianMusl), "Debian's musl package (install-deps.sh)");
  SUBCASE("glibc's image: no musl file") {
    MuslBed bed(false);
    REQUIRE(bed.update_libraries({kMuslFolder, kMuslFolder32}).exit_code == 0);
    CHECK(bed.read(kMuslPath) == "(none)");
  }
  SUBCASE("none before: the folder of 64-bit libraries, then musl's own search path") {
    MuslBed bed(true);
    const auto r = bed.update_libraries({kMuslFolder, kMuslFolder32});
    CHECK(r.err == "");
    REQUIRE(r.exit_code == 0);
    CHECK(bed.read(kMuslPath) == kMuslFolder + "\n" + kMuslDefault);
    CHECK(bed.read(kMuslPath32) == "(none)");  // no 32-bit loader in the image
    // Run again (a restart): nothing added twice.
    REQUIRE(bed.update_libraries({kMuslFolder, kMuslFolder32}).exit_code == 0);
    CHECK(bed.read(kMuslPath) == kMuslFolder + "\n" + kMuslDefault);
    // musl's loader finds libcuda.so.1 by name in the folder; without the file it does not.
    bed.copy(gcr::test::built("needs-libcuda.so"), "/needs-libcuda.so");
    const auto list = [&] {
      return gcr::test::run({"/usr/sbin/chroot", bed.rootfs, "/lib/ld-musl-x86_64.so.1", "--list",
                             "/needs-libcuda.so"});
    };
    const std::string found = "libcuda.so.1 => " + kMuslFolder + "/libcuda.so.1";
    const auto listed = list();
    CAPTURE(listed.err);
    CHECK(listed.out.find(found) != std::string::npos);
    REQUIRE(::unlink((bed.rootfs + kMuslPath).c_str()) == 0);
    CHECK(list().out.find(found) == std::string::npos);
    CHECK(list().err.find("Error loading shared library libcuda.so.1") != std::string::npos);
  }
  SUBCASE("the image's own file: the folder goes first, what it lists is kept") {
    MuslBed bed(true);
    gcr::test::write_file(bed.rootfs + kMuslPath, "/opt/lib:/lib\n/usr/lib");
    REQUIRE(bed.update_libraries({kMuslFolder}).exit_code == 0);
    CHECK(bed.read(kMuslPath) == kMuslFolder + "\n/opt/lib\n/lib\n/usr/lib\n");
  }
  SUBCASE("a folder the file lists already keeps its place, and the file is not rewritten") {
    MuslBed bed(true);
    const std::string own = "/lib:" + kMuslFolder + ":/usr/lib";
    gcr::test::write_file(bed.rootfs + kMuslPath, own);
    REQUIRE(bed.update_libraries({kMuslFolder}).exit_code == 0);
    CHECK(bed.read(kMuslPath) == own);
  }
  SUBCASE("Alpine without the loader, by its release file; 32-bit libraries for musl's i386") {
    MuslBed bed(false);
    gcr::test::write_file(bed.rootfs + "/etc/alpine-release", "3.22.0\n");
    bed.copy(kDebianMusl, "/lib/ld-musl-i386.so.1");  // any file: it is only looked for
    REQUIRE(bed.update_libraries({kMuslFolder, kMuslFolder32}).exit_code == 0);
    CHECK(bed.read(kMuslPath) == kMuslFolder + "\n" + kMuslDefault);
    CHECK(bed.read(kMuslPath32) == kMuslFolder32 + "\n" + kMuslDefault);
  }
}

// The shim writes a glibc image's loader cache at create, but leaves an image whose /lib holds
// musl's loader (Debian with the musl package, say) to the hook, which writes musl's file too.
TEST_CASE("at create: an image with musl's loader is left to the hook") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "ldconfig -r needs root");
  REQUIRE_MESSAGE(gcr::test::exists(kDebianMusl), "Debian's musl package (install-deps.sh)");
  for (const bool musl : {false, true}) {
    CAPTURE(musl);
    TempDir t;
    gcr::test::make_glibc_rootfs(t / "bundle");
    const std::string rootfs = t / "bundle/rootfs";
    if (musl) {
      boost::filesystem::copy_file(kDebianMusl, rootfs + "/lib/ld-musl-x86_64.so.1");
      REQUIRE(gcr::test::run({"/bin/touch", "-d", "@1", rootfs + "/lib"}).exit_code == 0);
    }
    auto root = gcr::RootFs::open(rootfs);
    REQUIRE(root.ok());
    const std::string lib = std::string(GCR_STUB_DIR) + "/lib64/libcuda.so." + kVersion;
    gcr::ResolvedDirs known;
    auto landed = gcr::land_mounts(
        *root, {gcr::MountToCome{kMuslFolder + "/libcuda.so." + kVersion, lib, true}}, known);
    REQUIRE(landed.ok());
    const auto done = gcr::update_libraries_at_create(
        *root, gcr::LibrariesRequest{{kMuslFolder}, {}, "@/sbin/ldconfig", {}}, *landed, known);
    CAPTURE(done.ok() ? std::string("done") : done.error().message);
    CHECK(done.ok() == !musl);
    if (musl && !done.ok()) CHECK(done.error().message.find("musl") != std::string::npos);
  }
}
