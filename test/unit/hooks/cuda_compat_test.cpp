// CUDA forward compatibility: which compat libcuda goes first (NVIDIA 1.20's rule), read from
// an image as hostile as any: one library exactly, a real library, resolved inside the rootfs,
// within the image budget; and the drop-in the enable-cuda-compat hook leaves for the
// loader-cache hook.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>

#include "base/fs.h"
#include "hooks/cuda_compat.h"
#include "ldcache/elf_library.h"
#include "sim_host.h"
#include "test_support.h"

namespace {

using gcr::test::kStubs;
const std::string kCompatLib = kStubs + "/compat/libcuda.so.575.57.08";  // with NVIDIA's note
const std::string kNote =
    R"({"Format": 1, "CUDA Version": "12.9", "Driver": [535, 550, 560, 565, 570, 575], )"
    R"("Device": [1, 2, 7, 8, 9, 10, 11, 12, 13, 14]})";

gcr::CudaCompatNote note_575() {
  return gcr::CudaCompatNote{"12.9", {535, 550, 560, 565, 570, 575}};
}

bool first(const std::string& compat, const std::optional<gcr::CudaCompatNote>& note,
           const std::string& host, const std::optional<std::string>& host_cuda = {}) {
  return gcr::judge_cuda_compat(compat, note, gcr::HostDriver{host, host_cuda}).first;
}

void copy_file(const std::string& from, const std::string& to) {
  gcr::test::write_file(to, gcr::test::read_file(from), 0755);
}

// A rootfs with `files` (in-root path -> host file) copied in.
struct Image {
  gcr::test::TempDir dir;
  std::string root = dir / "rootfs";

  explicit Image(const std::vector<std::pair<std::string, std::string>>& files = {}) {
    gcr::test::make_dirs(root + "/etc");
    for (const auto& [in_root, host] : files) copy_file(host, root + in_root);
  }

  [[nodiscard]] gcr::Result<gcr::CudaCompat> find(
      const std::string& host_version, const std::string& folder = "/usr/local/cuda/compat") const {
    auto opened = gcr::RootFs::open(root);
    REQUIRE(opened.ok());
    gcr::ImageBudget budget;
    return gcr::find_cuda_compat(*opened, folder, gcr::HostDriver{host_version, {}}, budget);
  }
};

}  // namespace

TEST_CASE("NVIDIA's note is read from the library's .note.cuda.fwd_compatibility section") {
  gcr::Fd fd(::open(kCompatLib.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  gcr::ImageBudget budget;
  auto note = gcr::read_elf_note(fd.get(), ".note.cuda.fwd_compatibility", "NVIDIA Corporation",
                                 budget, kCompatLib);
  REQUIRE(note.ok());
  CHECK(*note == kNote);
  auto parsed = gcr::parse_cuda_compat_note(**note);
  REQUIRE(parsed.ok());
  CHECK(parsed->cuda_version == "12.9");
  CHECK(parsed->drivers == std::vector<std::uint64_t>{535, 550, 560, 565, 570, 575});
  // Another owner, or a library without the section (the driver's own), has none.
  auto other = gcr::read_elf_note(fd.get(), ".note.cuda.fwd_compatibility", "GNU", budget, "x");
  REQUIRE(other.ok());
  CHECK_FALSE(other->has_value());
  const std::string plain = kStubs + "/lib64/libcuda.so." + GCR_STUB_DRIVER_VERSION;
  gcr::Fd driver(::open(plain.c_str(), O_RDONLY | O_CLOEXEC));
  auto none = gcr::read_elf_note(driver.get(), ".note.cuda.fwd_compatibility", "NVIDIA Corporation",
                                 budget, plain);
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
}

TEST_CASE("a note that is not NVIDIA's JSON object is refused") {
  for (const char* bad : {"[]", "{\"CUDA Version\": 12}", "{\"Driver\": \"535\"}",
                          "{\"Driver\": [-1]}", "{\"Driver\": [535.5]}", "not json"}) {
    CAPTURE(bad);
    CHECK_FALSE(gcr::parse_cuda_compat_note(bad).ok());
  }
  auto empty = gcr::parse_cuda_compat_note("{\"Format\": 1}");
  REQUIRE(empty.ok());
  CHECK(empty->cuda_version.empty());
  CHECK(empty->drivers.empty());
}

TEST_CASE("without a note: the compat library's driver branch above the host's") {
  CHECK(first("535.261.03", std::nullopt, "470.57.02"));
  CHECK(first("222.88.99", std::nullopt, "99.55.66"));  // numbers, not text
  CHECK_FALSE(first("535.261.03", std::nullopt, "535.54.03"));
  CHECK_FALSE(first("535.261.03", std::nullopt, "550.54.15"));
  CHECK_FALSE(first("535", std::nullopt, "470.57.02"));  // libcuda.so.<major> alone: no version
  CHECK_FALSE(first("535.x.1", std::nullopt, "470.57.02"));
  CHECK_FALSE(first("535.261.03", std::nullopt, ""));
  const auto verdict = gcr::judge_cuda_compat("535.261.03", std::nullopt, {"470.57.02", {}});
  CHECK(verdict.why ==
        "libcuda.so.535.261.03 is of a newer driver branch than the host's 470.57.02");
}

TEST_CASE("with NVIDIA's note: the host's branch among the library's, and the library newer") {
  const auto note = note_575();
  CHECK(first("575.57.08", note, "570.211.01"));
  CHECK(first("575.57.08", note, "575.10.10"));  // the same branch, an older driver
  CHECK(first("575.57.08", note, "550.54.15"));
  CHECK_FALSE(first("575.57.08", note, "575.57.08"));
  CHECK_FALSE(first("575.57.08", note, "575.99.99"));
  CHECK_FALSE(first("575.57.08", note, "590.44.01"));
  // A branch the library does not run on: a newer major alone is not enough.
  CHECK_FALSE(first("575.57.08", note, "470.57.02"));
  CHECK(gcr::judge_cuda_compat("575.57.08", note, {"470.57.02", {}}).why ==
        "libcuda.so.575.57.08 runs on driver branches 535, 550, 560, 565, 570, 575, not on the "
        "host's 470.57.02");
  // A note with a CUDA version alone: compared with the host's CUDA version when known.
  const gcr::CudaCompatNote cuda_only{"13.2", {}};
  CHECK(first("580.1.1", cuda_only, "580.9.9", std::string("13.1")));
  CHECK_FALSE(first("580.1.1", cuda_only, "570.9.9", std::string("13.2")));
  CHECK_FALSE(first("580.1.1", cuda_only, "570.9.9", std::string("13.10")));
  CHECK(first("580.1.1", cuda_only, "570.9.9"));  // no host CUDA version: the major rule
  // No host driver version (NVIDIA's specs leave it out where it has a `*`): the CUDA versions.
  CHECK(first("580.1.1", cuda_only, "", std::string("13.1")));
  CHECK_FALSE(first("580.1.1", cuda_only, "", std::string("13.2")));
  CHECK_FALSE(first("580.1.1", std::nullopt, "", std::string("13.1")));
}

TEST_CASE("the folder is found inside the rootfs, with exactly one real libcuda in it") {
  const Image image({{"/usr/local/cuda-12.9/compat/libcuda.so.575.57.08", kCompatLib}});
  gcr::test::make_symlink("cuda-12.9", image.root + "/usr/local/cuda");
  gcr::test::make_symlink("libcuda.so.575.57.08",
                          image.root + "/usr/local/cuda-12.9/compat/libcuda.so.1");
  auto found = image.find("550.54.15");
  REQUIRE(found.ok());
  CHECK(found->folder == "/usr/local/cuda-12.9/compat");  // as resolved in the image
  auto newer_host = image.find("575.64.05");
  REQUIRE(newer_host.ok());
  CHECK_FALSE(newer_host->folder);
  auto elsewhere = image.find("550.54.15", "/opt/compat");
  REQUIRE(elsewhere.ok());
  CHECK_FALSE(elsewhere->folder);
  CHECK(elsewhere->why == "the image has no /opt/compat");
  CHECK_FALSE(image.find("550.54.15", "/usr/local/cuda/../compat").ok());
}

TEST_CASE("hostile compat folders: nothing is done") {
  SUBCASE("two libraries") {
    const Image image({{"/usr/local/cuda/compat/libcuda.so.575.57.08", kCompatLib},
                       {"/usr/local/cuda/compat/libcuda.so.580.65.06", kCompatLib}});
    auto found = image.find("550.54.15");
    REQUIRE(found.ok());
    CHECK_FALSE(found->folder);
    CHECK(found->why == "2 libcuda.so.<version> files in /usr/local/cuda/compat, not one");
  }
  SUBCASE("a folder that is a symlink out of the rootfs: it stays in the image") {
    gcr::test::TempDir host;
    copy_file(kCompatLib, host / "compat/libcuda.so.575.57.08");
    const Image image;
    gcr::test::make_dirs(image.root + "/usr/local/cuda");
    for (const std::string& target :
         {host / "compat", "../../../../../../../.." + host / "compat"}) {
      CAPTURE(target);
      ::unlink((image.root + "/usr/local/cuda/compat").c_str());
      gcr::test::make_symlink(target, image.root + "/usr/local/cuda/compat");
      auto found = image.find("550.54.15");
      REQUIRE(found.ok());
      CHECK_FALSE(found->folder);
      CHECK(found->why == "the image has no /usr/local/cuda/compat");
    }
  }
  SUBCASE("a huge file of garbage: refused after reading its first bytes") {
    const Image image;
    const std::string huge = image.root + "/usr/local/cuda/compat/libcuda.so.999.1";
    gcr::test::write_file(huge, "garbage");
    REQUIRE(::truncate(huge.c_str(), off_t{8} << 30) == 0);  // 8 GiB, sparse
    const auto start = std::chrono::steady_clock::now();
    auto found = image.find("550.54.15");
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(100));
    REQUIRE_FALSE(found.ok());
    CHECK(found.error().message == "/usr/local/cuda/compat/libcuda.so.999.1: not an ELF file");
  }
  SUBCASE("a FIFO, a directory, a link to nowhere, another library") {
    const Image image;
    const std::string dir = image.root + "/usr/local/cuda/compat";
    gcr::test::make_dirs(dir);
    REQUIRE(::mkfifo((dir + "/libcuda.so.999.1").c_str(), 0644) == 0);
    CHECK_FALSE(image.find("550.54.15").ok());  // and does not wait for a writer
    ::unlink((dir + "/libcuda.so.999.1").c_str());
    gcr::test::make_dirs(dir + "/libcuda.so.999.1");
    CHECK_FALSE(image.find("550.54.15").ok());
    ::rmdir((dir + "/libcuda.so.999.1").c_str());
    gcr::test::make_symlink("/nowhere", dir + "/libcuda.so.999.1");
    CHECK_FALSE(image.find("550.54.15").ok());
    ::unlink((dir + "/libcuda.so.999.1").c_str());
    copy_file(kStubs + "/lib64/libnvidia-ml.so." + GCR_STUB_DRIVER_VERSION,
              dir + "/libcuda.so.999.1");
    auto other = image.find("550.54.15");
    REQUIRE_FALSE(other.ok());
    CHECK(other.error().message ==
          "/usr/local/cuda/compat/libcuda.so.999.1 is not a 64-bit "
          "libcuda.so.1");
  }
  SUBCASE("an image over its budget") {
    const Image image({{"/usr/local/cuda/compat/libcuda.so.575.57.08", kCompatLib}});
    auto root = gcr::RootFs::open(image.root);
    REQUIRE(root.ok());
    gcr::ImageBudget spent(gcr::ImageBudget::Clock::now() - std::chrono::seconds(1));
    auto found = gcr::find_cuda_compat(*root, "/usr/local/cuda/compat", {"550.54.15", {}}, spent);
    REQUIRE_FALSE(found.ok());
    CHECK(found.error().message.find("over the image budget of 1000 ms of work") == 0);
  }
}

TEST_CASE("the enable-cuda-compat drop-in: written, read back, removed; the image's own ignored") {
  const Image image;
  auto root = gcr::RootFs::open(image.root);
  REQUIRE(root.ok());
  const std::string path = image.root + "/etc/ld.so.conf.d/" + std::string(gcr::kCudaCompatDropIn);
  REQUIRE(gcr::write_cuda_compat_drop_in(*root, std::string("/usr/local/cuda/compat")).ok());
  CHECK(gcr::test::read_file(path) ==
        "# Written by gpu-container-runtime: CUDA forward-compatibility libraries, loaded "
        "first.\n/usr/local/cuda/compat\n");
  CHECK(gcr::cuda_compat_drop_in_folder(*root) == "/usr/local/cuda/compat");
  CHECK(gcr::with_compat_first(std::string("/c"), {"/a", "/c", "/b"}) ==
        std::vector<std::string>{"/c", "/a", "/b"});
  CHECK(gcr::with_compat_first(std::nullopt, {"/a"}) == std::vector<std::string>{"/a"});
  REQUIRE(gcr::write_cuda_compat_drop_in(*root, std::nullopt).ok());
  CHECK_FALSE(gcr::test::exists(path));
  REQUIRE(gcr::write_cuda_compat_drop_in(*root, std::nullopt).ok());  // nothing to remove
  CHECK_FALSE(gcr::write_cuda_compat_drop_in(*root, std::string("/a b")).ok());
  for (const char* text : {"/usr/local/cuda/compat\n",
                           "# Written by gpu-container-runtime: CUDA "
                           "forward-compatibility libraries, loaded first.\n/a\n/b\n"}) {
    gcr::test::write_file(path, text);
    CHECK_FALSE(gcr::cuda_compat_drop_in_folder(*root));
  }
}
