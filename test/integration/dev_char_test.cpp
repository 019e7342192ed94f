// gpu-ctk system create-dev-char-symlinks on a simulated host's real device nodes: a link per
// NVIDIA node, relative as udev writes them, each leading to its node; a second run changes
// nothing; a wrong link is replaced, a file in the way refused; NVIDIA's spelling and flags;
// --create-all and --dry-run; --watch linking nodes made after it started, ended by SIGTERM.
// Needs root (mknod).
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "gpu_fixture.h"

using gcr::Json;
using gcr::test::GpuFixture;
using gcr::test::ProcessResult;

namespace {

constexpr const char* kCommand = "create-dev-char-symlinks";

struct DevCharHost {
  GpuFixture f;

  std::string dev() const { return f.host().dev_root() + "/dev"; }
  std::string links() const { return dev() + "/char"; }

  gcr::test::RunOptions env() const {
    gcr::test::RunOptions options;
    options.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
    return options;
  }

  ProcessResult run(const std::string& program, const std::vector<std::string>& args) const {
    std::vector<std::string> argv{program, "system", kCommand};
    argv.insert(argv.end(), args.begin(), args.end());
    return gcr::test::run(argv, env());
  }
  ProcessResult ctk(const std::vector<std::string>& args = {}) const {
    return run(gcr::test::built("gpu-ctk"), args);
  }
  // gpu-ctk under NVIDIA's name, as the packages install it.
  ProcessResult nvidia_ctk(const std::vector<std::string>& args) const {
    const std::string link = f.path("bin/nvidia-ctk");
    if (!gcr::test::exists(link)) gcr::test::make_symlink(gcr::test::built("gpu-ctk"), link);
    return run(link, args);
  }

  // What the simulated host's NVIDIA nodes should be linked as: "major:minor" -> target.
  std::map<std::string, std::string> expected() const {
    const auto& h = f.host();
    std::map<std::string, std::string> out;
    for (const auto& gpu : h.gpus())
      out["195:" + std::to_string(gpu.minor)] = "../nvidia" + std::to_string(gpu.minor);
    out["195:255"] = "../nvidiactl";
    out["195:254"] = "../nvidia-modeset";
    const std::string uvm = std::to_string(h.uvm_major()) + ":";
    out[uvm + "0"] = "../nvidia-uvm";
    out[uvm + "1"] = "../nvidia-uvm-tools";
    for (unsigned minor : {1u, 2u, 12u, 13u, 21u, 22u}) {
      out[std::to_string(h.caps_major()) + ":" + std::to_string(minor)] =
          "../nvidia-caps/nvidia-cap" + std::to_string(minor);
    }
    const std::string imex = std::to_string(h.imex_major()) + ":";
    out[imex + "0"] = "../nvidia-caps-imex-channels/channel0";
    out[imex + "1"] = "../nvidia-caps-imex-channels/channel1";
    out[imex + "4"] = "../nvidia-caps-imex-channels/channel3";
    out["242:255"] = "../nvidia-nvswitchctl";
    out["242:0"] = "../nvidia-nvswitch0";
    out["240:0"] = "../nvidia-fs0";  // GPUDirect Storage's nodes are NVIDIA's too
    out["240:1"] = "../nvidia-fs1";
    return out;
  }

  // The links in the /dev/char directory: name -> target.
  std::map<std::string, std::string> linked() const {
    std::map<std::string, std::string> out;
    if (!gcr::test::exists(links())) return out;
    for (const auto& entry : std::filesystem::directory_iterator(links())) {
      const auto name = entry.path().filename().string();
      out[name] = entry.is_symlink() ? std::filesystem::read_symlink(entry.path()).string() : "";
    }
    return out;
  }

  void mknod_char(const std::string& path, unsigned major_number, unsigned minor_number) const {
    REQUIRE(::mknod(path.c_str(), S_IFCHR | 0666, makedev(major_number, minor_number)) == 0);
  }
};

// stat(2) through the link: the character device major:minor.
bool leads_to_device(const std::string& link, const std::string& numbers) {
  struct stat st {};
  if (::stat(link.c_str(), &st) != 0 || !S_ISCHR(st.st_mode)) return false;
  return std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)) == numbers;
}

std::string real_path(const std::string& path) {
  return std::filesystem::canonical(path).string();
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_ino;
}

bool wait_for_link(const std::string& link, int seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (gcr::test::exists(link)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE("create-dev-char-symlinks: a relative link per NVIDIA node; a second run keeps them") {
  REQUIRE(gcr::test::is_root());
  DevCharHost host;
  const auto first = host.ctk();
  CHECK_MESSAGE(first.exit_code == 0, first.err);
  CHECK(first.err == "");
  const auto expected = host.expected();
  CHECK(host.linked() == expected);
  for (const auto& link : expected) {
    const std::string& name = link.first;
    CHECK_MESSAGE(leads_to_device(host.links() + "/" + name, name), name);
  }
  CHECK(first.out.find("created " + host.links() + "/195:255 -> ../nvidiactl\n") !=
        std::string::npos);
  CHECK(first.out.find(host.links() + ": " + std::to_string(expected.size()) +
                       " NVIDIA device nodes, " + std::to_string(expected.size()) +
                       " links made, 0 not made\n") != std::string::npos);

  const ino_t before = inode_of(host.links() + "/195:255");
  const auto second = host.ctk();
  CHECK(second.exit_code == 0);
  CHECK(second.out == host.links() + ": " + std::to_string(expected.size()) +
                          " NVIDIA device nodes, 0 links made, 0 not made\n");
  CHECK(inode_of(host.links() + "/195:255") == before);
  CHECK(host.linked() == expected);
}

TEST_CASE("create-dev-char-symlinks: a wrong link is replaced; a file in the way is refused") {
  REQUIRE(gcr::test::is_root());
  DevCharHost host;
  const std::string uvm = std::to_string(host.f.host().uvm_major()) + ":0";
  gcr::test::make_dirs(host.links());
  gcr::test::make_symlink("../nvidia0", host.links() + "/195:255");  // another node
  gcr::test::make_symlink("../gone", host.links() + "/195:254");     // leads nowhere
  gcr::test::write_file(host.links() + "/" + uvm, "someone's file\n");
  const auto r = host.ctk();
  CHECK(r.exit_code == 1);
  CHECK(r.err == "gpu-ctk system create-dev-char-symlinks: cannot link " + uvm +
                     " to ../nvidia-uvm: a regular file is in the way (" + host.links() + "/" +
                     uvm + ")\n");
  CHECK(gcr::test::read_file(host.links() + "/" + uvm) == "someone's file\n");
  CHECK(r.out.find("replaced " + host.links() +
                   "/195:255 -> ../nvidiactl (it led to ../nvidia0)") != std::string::npos);
  auto expected = host.expected();
  expected[uvm] = "";  // the file stays
  CHECK(host.linked() == expected);
  CHECK(leads_to_device(host.links() + "/195:255", "195:255"));
  CHECK(leads_to_device(host.links() + "/195:254", "195:254"));
}

TEST_CASE("nvidia-ctk system create-dev-char-symlinks: NVIDIA's flags, --create-all, --dry-run") {
  REQUIRE(gcr::test::is_root());
  DevCharHost host;
  // A configuration whose dev root holds no node: NVIDIA's --driver-root names the one that does.
  host.f.configure({{"driver", {{"dev-root", host.f.path("empty")}}}});
  const std::string links = host.f.path("links");
  const auto dry = host.nvidia_ctk(
      {"-driver-root=" + host.f.host().dev_root(), "--dev-char-path", links, "--dry-run"});
  CHECK_MESSAGE(dry.exit_code == 0, dry.err);
  const auto target = std::filesystem::path(real_path(host.dev()) + "/nvidiactl")
                          .lexically_relative(links)
                          .string();
  CHECK(target.rfind("../", 0) == 0);
  CHECK(dry.out.find("would create " + links + "/195:255 -> " + target + "\n") !=
        std::string::npos);
  CHECK_FALSE(gcr::test::exists(links));

  // Nodes the driver announces that nobody has made yet: linked only with --create-all.
  const auto& gpu = host.f.host().gpus().at(0);
  const std::string gpu_node = host.dev() + "/nvidia" + std::to_string(gpu.minor);
  const std::string gpu_link = links + "/195:" + std::to_string(gpu.minor);
  const std::string tools = std::to_string(host.f.host().uvm_major()) + ":1";
  REQUIRE(::unlink(gpu_node.c_str()) == 0);
  REQUIRE(::unlink((host.dev() + "/nvidia-uvm-tools").c_str()) == 0);
  const std::vector<std::string> flags{"--driver-root", host.f.host().dev_root(), "--dev-char-path",
                                       links};
  auto r = host.nvidia_ctk(flags);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(leads_to_device(links + "/195:255", "195:255"));
  CHECK_FALSE(std::filesystem::is_symlink(gpu_link));
  CHECK_FALSE(std::filesystem::is_symlink(links + "/" + tools));

  auto all = flags;
  all.push_back("--create-all");
  r = host.nvidia_ctk(all);
  CHECK_MESSAGE(r.exit_code == 0, r.err);
  CHECK(std::filesystem::is_symlink(gpu_link));
  CHECK(std::filesystem::is_symlink(links + "/" + tools));
  CHECK_FALSE(leads_to_device(gpu_link, "195:" + std::to_string(gpu.minor)));  // not yet
  host.mknod_char(gpu_node, 195, gpu.minor);
  CHECK(leads_to_device(gpu_link, "195:" + std::to_string(gpu.minor)));  // from now on

  for (const auto& [given, name] :
       std::map<std::string, std::string>{{"--load-kernel-modules", "--load-kernel-modules"},
                                          {"-create-device-nodes", "--create-device-nodes"}}) {
    const auto no = host.nvidia_ctk({given});
    CHECK(no.exit_code == 2);
    CHECK(no.err.find("nvidia-ctk system create-dev-char-symlinks: " + name +
                      " is not supported: gpu-ctk ") == 0);
  }
}

TEST_CASE("create-dev-char-symlinks --watch: nodes made later are linked; SIGTERM ends it") {
  REQUIRE(gcr::test::is_root());
  DevCharHost host;
  const std::string imex = host.dev() + "/nvidia-caps-imex-channels";
  std::filesystem::remove_all(imex);  // made while it watches
  gcr::test::Daemon watch({gcr::test::built("gpu-ctk"), "system", kCommand, "--watch"}, host.env(),
                          host.f.path("watch.log"));
  REQUIRE_MESSAGE(wait_for_link(host.links() + "/195:255", 10),
                  gcr::test::read_file(host.f.path("watch.log")));
  host.mknod_char(host.dev() + "/nvidia9", 195, 9);
  CHECK(wait_for_link(host.links() + "/195:9", 10));
  gcr::test::make_dirs(imex);
  host.mknod_char(imex + "/channel7", host.f.host().imex_major(), 7);
  const std::string channel7 =
      host.links() + "/" + std::to_string(host.f.host().imex_major()) + ":7";
  CHECK(wait_for_link(channel7, 10));
  host.mknod_char(imex + "/channel8", host.f.host().imex_major(), 8);  // in the new directory
  CHECK(wait_for_link(host.links() + "/" + std::to_string(host.f.host().imex_major()) + ":8", 10));
  CHECK(watch.stop() == 0);
  CHECK(leads_to_device(host.links() + "/195:9", "195:9"));
  CHECK(leads_to_device(channel7, std::to_string(host.f.host().imex_major()) + ":7"));
  const std::string log = gcr::test::read_file(host.f.path("watch.log"));
  CHECK(log.find("created " + host.links() + "/195:9 -> ../nvidia9") != std::string::npos);
}

// A driver container's /dev replaced (moved away here, a new one in its place): the watch was
// left on the old directory and linked nothing again. It is watched again by its name.
TEST_CASE("create-dev-char-symlinks --watch: a /dev replaced is watched again and linked") {
  REQUIRE(gcr::test::is_root());
  DevCharHost host;
  gcr::test::Daemon watch({gcr::test::built("gpu-ctk"), "system", kCommand, "--watch"}, host.env(),
                          host.f.path("watch.log"));
  REQUIRE_MESSAGE(wait_for_link(host.links() + "/195:255", 10),
                  gcr::test::read_file(host.f.path("watch.log")));
  std::filesystem::rename(host.dev(), host.dev() + ".old");
  gcr::test::make_dirs(host.dev());
  host.mknod_char(host.dev() + "/nvidiactl", 195, 255);
  host.mknod_char(host.dev() + "/nvidia10", 195, 10);
  CHECK_MESSAGE(wait_for_link(host.links() + "/195:10", 10),
                gcr::test::read_file(host.f.path("watch.log")));
  CHECK(leads_to_device(host.links() + "/195:10", "195:10"));
  CHECK(watch.stop() == 0);
}

// A dev root whose /dev is a symlink (to the directory a driver container's nodes are made in):
// the links are made in the real directory, and --watch watches it (it refused to start).
TEST_CASE("create-dev-char-symlinks --watch: a /dev that is a symlink is watched where it leads") {
  REQUIRE(gcr::test::is_root());
  DevCharHost host;
  std::filesystem::rename(host.dev(), host.dev() + ".real");
  gcr::test::make_symlink("dev.real", host.dev());
  gcr::test::Daemon watch({gcr::test::built("gpu-ctk"), "system", kCommand, "--watch"}, host.env(),
                          host.f.path("watch.log"));
  REQUIRE_MESSAGE(wait_for_link(host.links() + "/195:255", 10),
                  gcr::test::read_file(host.f.path("watch.log")));
  host.mknod_char(host.dev() + "/nvidia11", 195, 11);
  CHECK_MESSAGE(wait_for_link(host.dev() + ".real/char/195:11", 10),
                gcr::test::read_file(host.f.path("watch.log")));
  CHECK(leads_to_device(host.links() + "/195:11", "195:11"));
  CHECK(watch.stop() == 0);
}
