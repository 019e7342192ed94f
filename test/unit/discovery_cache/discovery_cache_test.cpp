// The discovery cache (issue 44): the stamps of what discovery consulted, the file they are kept
// in, and when what is kept may be used. On a temporary tree, without root.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <functional>

#include "base/trust.h"
#include "discovery_cache/driver_files_cache.h"
#include "discovery_cache/fields.h"
#include "discovery_cache/path_stamps.h"
#include "discovery_cache/proc_files.h"
#include "discovery_cache/recording_host.h"
#include "discovery_cache/stamped_file.h"
#include "driver/host_fs.h"
#include "test_support.h"

using gcr::ConsultedPaths;
using gcr::PathStamp;
using gcr::Stamped;
using gcr::test::make_symlink;
using gcr::test::TempDir;
using gcr::test::write_file;

namespace {

using gcr::test::contains;

// A driver root: Debian's layout in small, libcuda.so.1 -> /etc/alternatives/... -> the file.
struct Tree {
  TempDir t;
  std::string root = t / "root";
  std::string lib = root + "/usr/lib/x86_64-linux-gnu";
  std::string real = lib + "/nvidia/current/libcuda.so.580.95.05";
  Tree() {
    write_file(real, "\177ELF");
    make_symlink("/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.580.95.05",
                 root + "/etc/alternatives/nvidia--libcuda.so.1");
    make_symlink("/etc/alternatives/nvidia--libcuda.so.1", lib + "/libcuda.so.1");
    make_symlink("usr/lib", root + "/lib");
  }
  // What discovery asks about libcuda, and about a program it did not find.
  [[nodiscard]] ConsultedPaths consulted() const {
    ConsultedPaths c;
    c.in_root(root, "/lib/x86_64-linux-gnu/libcuda.so.1");
    c.host(root + "/usr/bin/nvidia-smi", false);
    return c;
  }
};

std::vector<std::string> paths_of(const std::vector<PathStamp>& stamps) {
  std::vector<std::string> paths;
  for (const auto& s : stamps) paths.push_back(s.path);
  return paths;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename());
  return names;
}

// Discovery as if it had started `seconds` from now (the tree was made just before).
timespec started_in(time_t seconds) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  now.tv_sec += seconds;
  return now;
}

// What a live read of `path` gives, each read counted in `count`.
std::function<gcr::Result<std::string>()> counted_read(const std::string& path, int& count) {
  return [&path, &count] {
    ++count;
    return gcr::Result<std::string>(gcr::test::read_file(path));
  };
}

// Replaces the symlink at `link` with one to `target`, as a package manager does (rename).
void retarget(const std::string& link, const std::string& target) {
  make_symlink(target, link + ".new");
  REQUIRE(::rename((link + ".new").c_str(), link.c_str()) == 0);
}

}  // namespace

TEST_CASE("stamps: every directory and file on the way through the symlinks, no symlink itself") {
  Tree tree;
  const auto stamps = tree.consulted().stamps();
  const auto paths = paths_of(stamps);
  for (const std::string& p :
       {std::string("/"), tree.root, tree.root + "/usr", tree.root + "/usr/lib", tree.lib,
        tree.root + "/etc", tree.root + "/etc/alternatives", tree.lib + "/nvidia",
        tree.lib + "/nvidia/current", tree.real}) {
    CHECK_MESSAGE(contains(paths, p), p);
  }
  // Links and missing names are covered by their directories' stamps.
  CHECK_FALSE(contains(paths, tree.root + "/lib"));
  CHECK_FALSE(contains(paths, tree.lib + "/libcuda.so.1"));
  CHECK_FALSE(contains(paths, tree.root + "/usr/bin"));
  CHECK(gcr::changed_path(stamps) == std::nullopt);
  // Names made beside the path in a folder only passed through change nothing found.
  write_file(tree.root + "/usr/lib/unrelated", "x");
  write_file(tree.t / "unrelated", "x");
  CHECK(gcr::changed_path(stamps) == std::nullopt);
  // Where a link or a missing name was, they do.
  write_file(tree.lib + "/unrelated", "x");
  CHECK(gcr::changed_path(stamps) == tree.lib);
}

TEST_CASE("stamps: a change to a file, a folder's names or its owner and mode is seen") {
  SUBCASE("the library rewritten in place") {
    Tree tree;
    const auto stamps = tree.consulted().stamps();
    write_file(tree.real, "\177ELF changed");
    CHECK(gcr::changed_path(stamps) == tree.real);
  }
  SUBCASE("the library made writable by its group") {
    Tree tree;
    const auto stamps = tree.consulted().stamps();
    REQUIRE(::chmod(tree.real.c_str(), 0664) == 0);
    CHECK(gcr::changed_path(stamps) == tree.real);
  }
  SUBCASE("a folder on the way made writable by others") {
    Tree tree;
    const auto stamps = tree.consulted().stamps();
    REQUIRE(::chmod((tree.lib + "/nvidia").c_str(), 0777) == 0);
    CHECK(gcr::changed_path(stamps) == tree.lib + "/nvidia");
  }
  SUBCASE("the alternative pointed at another file") {
    Tree tree;
    const auto stamps = tree.consulted().stamps();
    write_file(tree.lib + "/nvidia/other.so", "\177ELF");
    retarget(tree.root + "/etc/alternatives/nvidia--libcuda.so.1",
             "/usr/lib/x86_64-linux-gnu/nvidia/other.so");
    CHECK(gcr::changed_path(stamps).has_value());
  }
  SUBCASE("a program appears where discovery found none") {
    Tree tree;
    const auto stamps = tree.consulted().stamps();
    write_file(tree.root + "/usr/bin/nvidia-smi", "\177ELF", 0755);
    CHECK(gcr::changed_path(stamps) == tree.root + "/usr");
  }
  SUBCASE("a tmpfs mounted over a folder on the way") {
    if (::geteuid() != 0) return;  // mounting needs root
    Tree tree;
    const auto stamps = tree.consulted().stamps();
    const std::string at = tree.lib + "/nvidia";
    REQUIRE(gcr::test::run({"/bin/mount", "-t", "tmpfs", "gcr-test", at}).exit_code == 0);
    CHECK(gcr::changed_path(stamps) == at);
    REQUIRE(gcr::test::run({"/bin/umount", at}).exit_code == 0);
  }
}

TEST_CASE("stamped file: kept, read back, and refused when anything about it is off") {
  Tree tree;
  const std::string dir = tree.t / "state/discovery";
  const Stamped stamped{tree.consulted().stamps(), {}, std::string("payload\n\0with a NUL", 19)};
  REQUIRE(gcr::store_stamped(dir, "key 1", stamped, started_in(3)).ok());
  struct stat st {};
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0700);
  CHECK(*gcr::load_stamped(dir, "key 1") == stamped.payload);
  CHECK(gcr::load_stamped(dir, "key 2").error().message == "nothing kept yet");

  SUBCASE("a stamp that no longer holds") {
    REQUIRE(::chmod(tree.real.c_str(), 0600) == 0);
    CHECK(gcr::load_stamped(dir, "key 1").error().message ==
          "changed since it was kept: " + tree.real);
  }
  SUBCASE("a file others could have written") {
    const std::string file = dir + "/" + names_in(dir).at(0);
    REQUIRE(::chmod(file.c_str(), 0620) == 0);
    CHECK(gcr::load_stamped(dir, "key 1").error().message ==
          "not a file of ours alone (" + file + ")");
  }
  SUBCASE("a file with a second name") {
    const std::string file = dir + "/" + names_in(dir).at(0);
    REQUIRE(::link(file.c_str(), (tree.t / "second").c_str()) == 0);
    CHECK(gcr::load_stamped(dir, "key 1").error().message ==
          "not a file of ours alone (" + file + ")");
  }
  SUBCASE("a file over 1 MiB, the most a kept file may hold") {
    const std::string file = dir + "/" + names_in(dir).at(0);
    write_file(file, gcr::test::read_file(file) + std::string(std::size_t{1} << 20, 'x'), 0600);
    CHECK(gcr::load_stamped(dir, "key 1").error().message == "larger than 1 MiB (" + file + ")");
  }
  SUBCASE("a directory others could write") {
    REQUIRE(::chmod(dir.c_str(), 0733) == 0);
    CHECK(gcr::load_stamped(dir, "key 1").error().message ==
          "not a directory of ours alone (" + dir + ")");
  }
  SUBCASE("a file cut short or overwritten") {
    const std::string file = dir + "/" + names_in(dir).at(0);
    const std::string whole = gcr::test::read_file(file);
    for (std::size_t keep : {std::size_t{0}, std::size_t{10}, whole.size() / 2, whole.size() - 1}) {
      write_file(file, whole.substr(0, keep), 0600);
      CHECK(gcr::load_stamped(dir, "key 1").error().message == "unreadable (" + file + ")");
    }
    write_file(file, "gcr-discovery-cache 2\n99999999999999999999999:key 1", 0600);
    CHECK(gcr::load_stamped(dir, "key 1").error().message == "unreadable (" + file + ")");
  }
}

TEST_CASE("stamped file: nothing found from files changed less than 2 s before is kept") {
  Tree tree;
  const std::string dir = tree.t / "state/discovery";
  const Stamped stamped{tree.consulted().stamps(), {}, "payload"};
  const auto kept = gcr::store_stamped(dir, "key", stamped, started_in(0));
  REQUIRE_FALSE(kept.ok());
  CHECK(kept.error().message.starts_with("changed less than 2 s before discovery ("));
  CHECK(gcr::load_stamped(dir, "key").error().message == "nothing kept yet");
}

TEST_CASE("stamped file: a full directory loses its older half before another is kept") {
  Tree tree;
  const std::string dir = tree.t / "state/discovery";
  const Stamped stamped{tree.consulted().stamps(), {}, "payload"};
  std::vector<std::string> files;  // by key
  for (int i = 0; i < 64; ++i) {
    REQUIRE(gcr::store_stamped(dir, "key " + std::to_string(i), stamped, started_in(3)).ok());
    for (const auto& name : names_in(dir)) {
      if (!contains(files, name)) files.push_back(name);
    }
    // Key i written i seconds after the first.
    const timespec times[2] = {{0, UTIME_OMIT}, {1700000000 + i, 0}};
    REQUIRE(::utimensat(AT_FDCWD, (dir + "/" + files.back()).c_str(), times, 0) == 0);
  }
  REQUIRE(files.size() == 64);
  write_file(dir + "/.files-0.tmp", "another shim's file, not yet renamed", 0600);
  REQUIRE(gcr::store_stamped(dir, "key 64", stamped, started_in(3)).ok());
  const auto left = names_in(dir);
  CHECK(left.size() == 34);
  for (int i = 0; i < 64; ++i) CHECK_MESSAGE(contains(left, files[i]) == (i >= 32), i);
  CHECK(contains(left, ".files-0.tmp"));
  CHECK(gcr::load_stamped(dir, "key 64").ok());
  CHECK(gcr::load_stamped(dir, "key 63").ok());
  CHECK(gcr::load_stamped(dir, "key 31").error().message == "nothing kept yet");
}

TEST_CASE("a driver file set and its notes read back exactly; a damaged one does not") {
  gcr::DriverFileSet set;
  set.libraries.push_back({{"/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05",
                            "/run/nvidia/driver/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05"},
                           "libcuda.so",
                           "/usr/lib/x86_64-linux-gnu",
                           gcr::ElfLibrary{"libcuda.so.1", 0x0303}});
  // One read without a soname, one not read.
  set.libraries.push_back({{"/usr/lib/libnosoname.so.1", "/usr/lib/libnosoname.so.1"},
                           "libnosoname.so",
                           "/usr/lib",
                           gcr::ElfLibrary{std::nullopt, -7}});
  set.libraries.push_back(
      {{"/usr/lib/libunread.so.1", "/usr/lib/libunread.so.1"}, "libunread.so", "/usr/lib", {}});
  set.binaries.push_back({"/usr/bin/nvidia-smi", "/usr/bin/nvidia-smi"});
  set.firmware.push_back({"/lib/firmware/nvidia/580.95.05/gsp_ga10x.bin",
                          "/usr/lib/firmware/nvidia/580.95.05/gsp_ga10x.bin"});
  set.config_files.push_back({"/etc/OpenCL/vendors/nvidia.icd", "/etc/OpenCL/vendors/nvidia.icd"});
  set.modules.push_back({"/usr/lib/x86_64-linux-gnu/gbm/nvidia-drm_gbm.so",
                         "/usr/lib/x86_64-linux-gnu/libnvidia-allocator.so.580.95.05"});
  const std::vector<std::string> notes{"refused /usr/lib/x\n: a name:with colons, 12,"};
  const std::string payload = gcr::encode_file_set(set, notes);
  const auto decoded = gcr::decode_file_set(payload);
  REQUIRE(decoded);
  CHECK(decoded->notes == notes);
  REQUIRE(decoded->set.libraries.size() == 3);
  CHECK(decoded->set.libraries[0].host_path == set.libraries[0].host_path);
  REQUIRE(decoded->set.libraries[0].elf);
  CHECK(decoded->set.libraries[0].elf->soname == "libcuda.so.1");
  CHECK(decoded->set.libraries[0].elf->flags == 0x0303);
  REQUIRE(decoded->set.libraries[1].elf);
  CHECK_FALSE(decoded->set.libraries[1].elf->soname);
  CHECK(decoded->set.libraries[1].elf->flags == -7);
  CHECK_FALSE(decoded->set.libraries[2].elf);
  CHECK(decoded->set.libraries[0].prefix == "libcuda.so");
  CHECK(decoded->set.libraries[0].loader_dir == "/usr/lib/x86_64-linux-gnu");
  CHECK(decoded->set.modules.at(0).path == set.modules[0].path);
  CHECK(decoded->set.config_files.at(0).host_path == set.config_files[0].host_path);
  CHECK(gcr::encode_file_set(decoded->set, decoded->notes) == payload);
  for (std::size_t keep = 0; keep < payload.size(); ++keep)
    CHECK_FALSE(gcr::decode_file_set(payload.substr(0, keep)));
  CHECK_FALSE(gcr::decode_file_set(payload + "1,"));
  // A soname no library could give (a link could not be named by it) makes the set unreadable.
  const std::vector<std::string> odd_sonames{"a/b", "..", "", std::string("a\0b", 3),
                                             std::string(256, 'x')};
  for (const auto& bad : odd_sonames) {
    gcr::DriverFileSet odd;
    odd.libraries.push_back({{"/usr/lib/libodd.so.1", "/usr/lib/libodd.so.1"},
                             "libodd.so",
                             "/usr/lib",
                             gcr::ElfLibrary{bad, 0x0303}});
    CHECK_FALSE(gcr::decode_file_set(gcr::encode_file_set(odd, {})));
  }
  CHECK(gcr::is_soname_file_name(std::string(255, 'x')));
}

TEST_CASE("fields: numbers and texts read back; lengths beyond the data are refused") {
  gcr::FieldWriter w;
  w.number(18446744073709551615ULL);
  w.signed_number(-9223372036854775807LL);
  w.text(std::string("a\0b", 3));
  const std::string fields = w.take();
  gcr::FieldReader r(fields);
  std::uint64_t n = 0;
  std::int64_t s = 0;
  std::string text;
  CHECK(r.number(n));
  CHECK(n == 18446744073709551615ULL);
  CHECK(r.signed_number(s));
  CHECK(s == -9223372036854775807LL);
  CHECK(r.text(text));
  CHECK(text == std::string("a\0b", 3));
  CHECK(r.at_end());
  std::size_t count = 0;
  CHECK_FALSE(gcr::FieldReader("18446744073709551616,").number(n));
  CHECK_FALSE(gcr::FieldReader("99999999999999999999,").number(n));
  CHECK(gcr::FieldReader("9999999999999999999,").number(n));
  CHECK(n == 9999999999999999999ULL);
  CHECK(gcr::FieldReader("0000000000000000000000000042,").number(n));
  CHECK(n == 42);
  CHECK_FALSE(gcr::FieldReader("5:abc").text(text));
  CHECK_FALSE(gcr::FieldReader("1000000,ab").count(count));
  CHECK_FALSE(gcr::FieldReader(",").number(n));
}

TEST_CASE("recording: each path is stamped before discovery reads it") {
  Tree tree;
  gcr::SystemFs fs;
  gcr::TrustCheck trust(::geteuid());
  gcr::RecordingHost recorder(fs, trust);
  struct stat st {};
  REQUIRE(recorder.lstat(tree.real, st));
  CHECK_FALSE(recorder.lstat(tree.lib + "/nvidia/current/libnvidia-ml.so.1", st));
  CHECK(recorder.complete());
  // Changed after it was read: the stamps taken then say so, so nothing found is kept.
  REQUIRE(::chmod((tree.lib + "/nvidia").c_str(), 0775) == 0);
  CHECK(gcr::changed_path(recorder.consulted().stamps()) == tree.lib + "/nvidia");
}

TEST_CASE("recording: a configuration file added where an include line looks is seen") {
  Tree tree;
  write_file(tree.root + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
  write_file(tree.root + "/etc/ld.so.conf.d/x86_64-linux-gnu.conf", "/usr/lib/x86_64-linux-gnu\n");
  gcr::SystemFs fs;
  gcr::TrustCheck trust(::geteuid());
  gcr::RecordingHost recorder(fs, trust);
  const auto conf = recorder.loader_conf(tree.root);
  REQUIRE(conf.ok());
  CHECK(conf->directories == std::vector<std::string>{"/usr/lib/x86_64-linux-gnu"});
  const auto stamps = recorder.consulted().stamps();
  CHECK(gcr::changed_path(stamps) == std::nullopt);
  write_file(tree.root + "/etc/ld.so.conf.d/nvidia.conf", "/usr/local/nvidia/lib64\n");
  CHECK(gcr::changed_path(stamps) == tree.root + "/etc/ld.so.conf.d");
}

TEST_CASE("stamps: a link's owner counts in a sticky folder, where trust reads it") {
  if (::geteuid() != 0) return;  // lchown needs root
  Tree tree;
  const std::string sticky = tree.root + "/opt";
  gcr::test::make_dirs(sticky);
  REQUIRE(::chmod(sticky.c_str(), 01777) == 0);
  make_symlink("/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.580.95.05",
               sticky + "/libcuda.so.1");
  ConsultedPaths consulted;
  consulted.in_root(tree.root, "/opt/libcuda.so.1");
  const auto stamps = consulted.stamps();
  CHECK(contains(paths_of(stamps), sticky + "/libcuda.so.1"));
  REQUIRE(::lchown((sticky + "/libcuda.so.1").c_str(), 1000, 1000) == 0);
  CHECK(gcr::changed_path(stamps) == sticky + "/libcuda.so.1");
}

TEST_CASE("stamped file: nothing is kept below a folder others can write") {
  Tree tree;
  const std::string open = tree.t / "open";
  gcr::test::make_dirs(open);
  REQUIRE(::chmod(open.c_str(), 0777) == 0);
  const auto ready = gcr::store_directory(open + "/state/discovery");
  REQUIRE_FALSE(ready.ok());
  CHECK(ready.error().message == "writable by group or others (" + open + ")");
  const Stamped stamped{tree.consulted().stamps(), {}, "payload"};
  CHECK_FALSE(gcr::store_stamped(open + "/state/discovery", "key", stamped, started_in(3)).ok());
  CHECK_FALSE(gcr::test::exists(open + "/state"));
}

TEST_CASE("/proc files: kept under the file's stamp, read again once the file is another") {
  gcr::test::TempDir t;
  const std::string info = t / "proc/driver/nvidia/gpus/0000:3b:00.0/information";
  const std::string text = "Model: \t\t NVIDIA H200\nDevice Minor: \t 0\n";
  write_file(info, text);
  gcr::KeptProcFiles kept(t / "state", [] { return started_in(3); });
  int live = 0;
  const auto read_live = counted_read(info, live);
  CHECK(*kept.read(info, {}, read_live) == text);
  CHECK(*kept.read(info, {}, read_live) == text);
  CHECK(live == 1);

  SUBCASE("the entry made again: another inode") {
    write_file(info + ".new", "Model: \t\t NVIDIA H200\nDevice Minor: \t 1\n");
    REQUIRE(::rename((info + ".new").c_str(), info.c_str()) == 0);
    CHECK(kept.read(info, {}, read_live)->ends_with("Minor: \t 1\n"));
    CHECK(live == 2);
  }
  SUBCASE("the same file written again") {
    write_file(info, "Model: \t\t NVIDIA H200\nDevice Minor: \t 2\n");
    CHECK(kept.read(info, {}, read_live)->ends_with("Minor: \t 2\n"));
    CHECK(live == 2);
  }
  SUBCASE("another GPU's file is its own") {
    const std::string other = t / "proc/driver/nvidia/gpus/0000:5e:00.0/information";
    write_file(other, "Device Minor: \t 3\n");
    const auto read_other = [&] { return gcr::Result<std::string>(gcr::test::read_file(other)); };
    CHECK(*kept.read(other, {}, read_other) == "Device Minor: \t 3\n");
    CHECK(*kept.read(info, {}, read_live) == text);
    CHECK(live == 1);
  }
  SUBCASE("no state directory: read every time") {
    gcr::KeptProcFiles none("", [] { return started_in(3); });
    (void)none.read(info, {}, read_live);
    (void)none.read(info, {}, read_live);
    CHECK(live == 3);
  }
}

TEST_CASE("/proc files: one anchored to module directories is read again once one is made anew") {
  gcr::test::TempDir t;
  const std::string devices = t / "proc/devices";
  write_file(devices, "Character devices:\n195 nvidia\n238 nvidia-uvm\n");
  const std::string nvidia = t / "sys/module/nvidia";
  const std::string uvm = t / "sys/module/nvidia_uvm";
  gcr::test::make_dirs(nvidia);
  gcr::test::make_dirs(uvm);
  gcr::KeptProcFiles kept(t / "state", [] { return started_in(3); });
  int live = 0;
  const auto read_live = counted_read(devices, live);
  (void)kept.read(devices, {nvidia, uvm}, read_live);
  CHECK(*kept.read(devices, {nvidia, uvm}, read_live) ==
        "Character devices:\n195 nvidia\n238 nvidia-uvm\n");
  CHECK(live == 1);

  SUBCASE("a module loaded again: its directory is another") {
    REQUIRE(::rename(uvm.c_str(), (t / "gone").c_str()) == 0);
    gcr::test::make_dirs(uvm);
    (void)kept.read(devices, {nvidia, uvm}, read_live);
    CHECK(live == 2);
  }
  SUBCASE("a module not loaded: read every time") {
    REQUIRE(::rmdir(uvm.c_str()) == 0);
    (void)kept.read(devices, {nvidia, uvm}, read_live);
    (void)kept.read(devices, {nvidia, uvm}, read_live);
    CHECK(live == 3);
  }
  SUBCASE("kept apart from the same file read without anchors") {
    (void)kept.read(devices, {}, read_live);
    CHECK(live == 2);
  }
}

TEST_CASE("/proc files: a file changed less than 2 s before is read again each time") {
  gcr::test::TempDir t;
  const std::string info = t / "information";
  write_file(info, "Device Minor: \t 0\n");
  gcr::KeptProcFiles kept(t / "state", [] { return started_in(0); });
  int live = 0;
  const auto read_live = counted_read(info, live);
  (void)kept.read(info, {}, read_live);
  (void)kept.read(info, {}, read_live);
  CHECK(live == 2);
  const bool kept_any =
      gcr::test::exists(t / "state/discovery") && !names_in(t / "state/discovery").empty();
  CHECK_FALSE(kept_any);
}
