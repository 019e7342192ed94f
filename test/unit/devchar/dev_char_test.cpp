// The /dev/char links of NVIDIA's nodes: relative targets as udev writes them, the plan (create,
// keep, replace, refuse), the nodes a loaded driver announces, the links made in a directory
// (symlinks only: no root needed), and which nodes lack a link that leads to them.
#include <doctest/doctest.h>

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "devchar/dev_char.h"
#include "driver/host.h"
#include "sim_host.h"
#include "test_support.h"

using gcr::CharNode;
using gcr::LinkAction;
using gcr::LinkEntry;
using gcr::PlannedLink;
using gcr::test::TempDir;

namespace {

// What a /dev/char directory holds, by name.
std::function<LinkEntry(const std::string&)> holding(std::map<std::string, LinkEntry> entries) {
  return [entries = std::move(entries)](const std::string& name) {
    const auto it = entries.find(name);
    return it == entries.end() ? LinkEntry{} : it->second;
  };
}

std::string link_at(const std::string& path) {
  char target[4096];
  const ssize_t n = ::readlink(path.c_str(), target, sizeof target);
  return n < 0 ? "" : std::string(target, static_cast<std::size_t>(n));
}

ino_t inode_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::lstat(path.c_str(), &st) == 0);
  return st.st_ino;
}

}  // namespace

TEST_CASE("a link's target is relative to its directory, as udev writes /dev/char links") {
  CHECK(gcr::relative_target("/dev/char", "/dev/nvidia0") == "../nvidia0");
  CHECK(gcr::relative_target("/dev/char", "/dev/nvidia-caps/nvidia-cap1") ==
        "../nvidia-caps/nvidia-cap1");
  CHECK(gcr::relative_target("/dev/char/", "/dev//nvidiactl") == "../nvidiactl");
  CHECK(gcr::relative_target("/dev/char", "/run/nvidia/driver/dev/nvidia0") ==
        "../../run/nvidia/driver/dev/nvidia0");
  CHECK(gcr::relative_target("/tmp/sim/dev/char", "/tmp/sim/dev/nvidia-uvm") == "../nvidia-uvm");
  CHECK(gcr::relative_target("/dev", "/dev/nvidia0") == "nvidia0");
  CHECK(gcr::relative_target("relative/char", "/dev/nvidia0") == "/dev/nvidia0");
}

TEST_CASE("the plan: nothing there is created, our link kept, another replaced, a file refused") {
  const std::vector<CharNode> nodes = {{"/dev/nvidia0", 195, 0},
                                       {"/dev/nvidia1", 195, 1},
                                       {"/dev/nvidiactl", 195, 255},
                                       {"/dev/nvidia-uvm", 508, 0},
                                       {"/dev/nvidia-uvm-copy", 508, 0}};
  const auto plan =
      gcr::plan_links(nodes, "/dev/char",
                      holding({{"195:1", {LinkEntry::Kind::kSymlink, "../nvidia1", ""}},
                               {"195:255", {LinkEntry::Kind::kSymlink, "/dev/nvidia3", ""}},
                               {"508:0", {LinkEntry::Kind::kOther, "", "a regular file"}}}));
  CHECK(plan == std::vector<PlannedLink>{
                    {"195:0", "../nvidia0", LinkAction::kCreate, ""},
                    {"195:1", "../nvidia1", LinkAction::kKeep, ""},
                    {"195:255", "../nvidiactl", LinkAction::kReplace, "/dev/nvidia3"},
                    {"508:0", "../nvidia-uvm", LinkAction::kRefuse, "a regular file"},
                });
  CHECK(gcr::link_line("/dev/char", plan[0], false) == "created /dev/char/195:0 -> ../nvidia0");
  CHECK(gcr::link_line("/dev/char", plan[1], false) == "kept /dev/char/195:1 -> ../nvidia1");
  CHECK(gcr::link_line("/dev/char", plan[2], false) ==
        "replaced /dev/char/195:255 -> ../nvidiactl (it led to /dev/nvidia3)");
  CHECK(gcr::link_line("/dev/char", plan[2], true) ==
        "would replace /dev/char/195:255 -> ../nvidiactl (it led to /dev/nvidia3)");
  CHECK(gcr::link_line("/dev/char", plan[3], true) ==
        "would refuse /dev/char/508:0 -> ../nvidia-uvm: a regular file is in the way");
}

TEST_CASE("nodes announced but not made are added after those present, each number once") {
  const std::vector<CharNode> present = {
      {"/dev/nvidia0", 195, 0}, {"/dev/nvidiactl", 195, 255}, {"/dev/stray-ctl", 195, 255}};
  const std::vector<CharNode> announced = {
      {"/dev/nvidia0", 195, 0}, {"/dev/nvidia1", 195, 1}, {"/dev/nvidiactl", 195, 255}};
  CHECK(gcr::with_announced(present, announced) ==
        std::vector<CharNode>{
            {"/dev/nvidia0", 195, 0}, {"/dev/nvidiactl", 195, 255}, {"/dev/nvidia1", 195, 1}});
}

TEST_CASE("a loaded driver announces its GPUs, control nodes, UVM and the GPUs' MIG caps") {
  TempDir dir;
  gcr::test::SimHostOptions options;
  options.device_nodes = false;  // announced nodes are read from /proc alone
  options.gpus = 2;
  const gcr::test::SimHost sim(dir / "host", options);
  gcr::test::make_dirs(sim.dev_root() + "/dev");
  gcr::DriverHost host(gcr::Config::Driver{sim.driver_root(), sim.dev_root()}, gcr::lstat_node);
  const auto announced = gcr::announced_nvidia_nodes(host.devices());
  REQUIRE_MESSAGE(announced.ok(), announced.error().message);
  char real[PATH_MAX];
  REQUIRE(::realpath((sim.dev_root() + "/dev").c_str(), real) != nullptr);
  const std::string dev = real;
  std::vector<CharNode> expected;
  for (const auto& gpu : sim.gpus())
    expected.push_back({dev + "/nvidia" + std::to_string(gpu.minor), 195, gpu.minor});
  expected.push_back({dev + "/nvidiactl", 195, 255});
  expected.push_back({dev + "/nvidia-modeset", 195, 254});
  expected.push_back({dev + "/nvidia-uvm", sim.uvm_major(), 0});
  expected.push_back({dev + "/nvidia-uvm-tools", sim.uvm_major(), 1});
  // mig-minors: config 1, monitor 2, and gpu0's instances (a GPU with minor 0 is listed).
  for (unsigned minor : {1u, 2u, 12u, 13u, 21u, 22u})
    expected.push_back(
        {dev + "/nvidia-caps/nvidia-cap" + std::to_string(minor), sim.caps_major(), minor});
  CHECK(*announced == expected);

  gcr::DriverHost no_driver(gcr::Config::Driver{sim.driver_root(), dir / "empty"}, gcr::lstat_node);
  const auto none = gcr::announced_nvidia_nodes(no_driver.devices());
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().message.find("NVIDIA driver not found") == 0);
}

TEST_CASE("links in a directory: made, kept on a second pass, a wrong one replaced in place") {
  TempDir dir;
  const std::string links = dir / "dev/char";
  const std::vector<CharNode> nodes = {{dir / "dev/nvidia0", 195, 0},
                                       {dir / "dev/nvidia-caps/nvidia-cap1", 509, 1}};
  const auto dry = gcr::sync_links(nodes, links, true);
  CHECK(dry.errors.empty());
  CHECK(dry.plan.size() == 2);
  CHECK_FALSE(gcr::test::exists(links));  // a dry run makes not even the directory

  const auto first = gcr::sync_links(nodes, links, false);
  CHECK(first.errors.empty());
  CHECK(link_at(links + "/195:0") == "../nvidia0");
  CHECK(link_at(links + "/509:1") == "../nvidia-caps/nvidia-cap1");
  const ino_t kept = inode_of(links + "/195:0");

  const auto second = gcr::sync_links(nodes, links, false);
  CHECK(second.errors.empty());
  for (const auto& link : second.plan) CHECK(link.action == LinkAction::kKeep);
  CHECK(inode_of(links + "/195:0") == kept);

  REQUIRE(::unlink((links + "/509:1").c_str()) == 0);
  gcr::test::make_symlink("/dev/nvidia7", links + "/509:1");
  const auto third = gcr::sync_links(nodes, links, false);
  CHECK(third.errors.empty());
  CHECK(third.plan.at(1).action == LinkAction::kReplace);
  CHECK(link_at(links + "/509:1") == "../nvidia-caps/nvidia-cap1");
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(links))
    names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"195:0", "509:1"});  // no temporary name left
}

TEST_CASE("a link another run made after the plan is kept, or replaced when it leads elsewhere") {
  // udev runs the rule for several nodes at once: each run plans, then another makes the link.
  TempDir dir;
  const std::string links = dir / "dev/char";
  auto opened = gcr::DevCharDir::open(links, true);
  REQUIRE(opened.ok());
  const gcr::DevCharDir& char_dir = *opened;
  auto plan = gcr::plan_links({{dir / "dev/nvidia0", 195, 0}, {dir / "dev/nvidia1", 195, 1}},
                              char_dir.path(),
                              [&](const std::string& name) { return char_dir.entry(name); });
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].action == LinkAction::kCreate);
  CHECK(plan[1].action == LinkAction::kCreate);
  const PlannedLink to_create = plan[0];
  gcr::test::make_symlink("../nvidia0", links + "/195:0");
  gcr::test::make_symlink("../nvidia7", links + "/195:1");
  CHECK(char_dir.apply(plan[0]).ok());
  CHECK(link_at(links + "/195:0") == "../nvidia0");
  CHECK(plan[0].action == LinkAction::kKeep);  // reported as kept, not created
  CHECK(char_dir.apply(plan[1]).ok());
  CHECK(link_at(links + "/195:1") == "../nvidia1");
  CHECK(plan[1].action == LinkAction::kReplace);
  CHECK(plan[1].found == "../nvidia7");
  plan[0] = to_create;

  REQUIRE(::unlink((links + "/195:0").c_str()) == 0);
  gcr::test::write_file(links + "/195:0", "mine\n");
  const auto refused = char_dir.apply(plan[0]);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message ==
        "cannot link 195:0 to ../nvidia0: a regular file is in the way (" + char_dir.path() +
            "/195:0)");
  CHECK(gcr::test::read_file(links + "/195:0") == "mine\n");
}

TEST_CASE("a file where a link goes is left alone and named in an error; the rest are made") {
  TempDir dir;
  const std::string links = dir / "dev/char";
  gcr::test::write_file(links + "/195:0", "mine\n");
  const std::vector<CharNode> nodes = {{dir / "dev/nvidia0", 195, 0},
                                       {dir / "dev/nvidiactl", 195, 255}};
  const auto run = gcr::sync_links(nodes, links, false);
  REQUIRE(run.errors.size() == 1);
  CHECK(run.errors[0] ==
        "cannot link 195:0 to ../nvidia0: a regular file is in the way (" + run.dir + "/195:0)");
  CHECK(gcr::test::read_file(links + "/195:0") == "mine\n");
  CHECK(link_at(links + "/195:255") == "../nvidiactl");
}

TEST_CASE("nodes whose link is missing, dangling or leads to another device are unlinked") {
  const std::vector<CharNode> nodes = {{"/dev/nvidia0", 195, 0},
                                       {"/dev/nvidia1", 195, 1},
                                       {"/dev/nvidia2", 195, 2},
                                       {"/dev/nvidia-uvm", 508, 0},
                                       {"/dev/nvidiactl", 195, 255}};
  const gcr::NodeStatFn stat = [](const std::string& path) -> gcr::Result<gcr::NodeStat> {
    if (path == "/c/195:0") return gcr::NodeStat{'c', 195, 0};
    if (path == "/c/195:1") return gcr::NodeStat{'c', 195, 7};  // another GPU's node
    if (path == "/c/508:0") return gcr::NodeStat{'b', 508, 0};  // a block device
    return gcr::Error{"No such file or directory (" + path + ")"};
  };
  CHECK(gcr::unlinked_nodes(nodes, "/c", stat) ==
        std::vector<CharNode>{{"/dev/nvidia1", 195, 1},
                              {"/dev/nvidia2", 195, 2},
                              {"/dev/nvidia-uvm", 508, 0},
                              {"/dev/nvidiactl", 195, 255}});
}
