// The CDI reference behaviours (reference/cdi.md §7.2, §7.3) for apply_edits.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>

#include "edits/apply.h"

using gcr::ContainerEdits;
using gcr::Json;

namespace {

// A host with /dev/null (1:3, 0666) and a FIFO; anything else is missing.
gcr::NodeStatFn fake_host() {
  return [](const std::string& path) -> gcr::Result<gcr::NodeStat> {
    if (path == "/dev/null") return gcr::NodeStat{'c', 1, 3, 0666, 0, 0};
    if (path == "/host/dev/gpu0") return gcr::NodeStat{'c', 195, 0, 0660, 0, 44};
    if (path == "/tmp/fifo") return gcr::NodeStat{'p', 0, 0, 0600, 0, 0};
    if (path == "/etc/passwd") return gcr::NodeStat{'\0', 0, 0, 0644, 0, 0};
    return gcr::Error{"No such file or directory (" + path + ")"};
  };
}

gcr::DeviceNode device_node(const std::string& path) {
  gcr::DeviceNode n;
  n.path = path;
  return n;
}

// A character node with its numbers, as a CDI spec or discovery writes it.
gcr::DeviceNode char_node(const std::string& path, std::int64_t major, std::int64_t minor) {
  gcr::DeviceNode n = device_node(path);
  n.type = "c";
  n.major = major;
  n.minor = minor;
  return n;
}

Json applied(Json spec, const ContainerEdits& edits, std::vector<std::string>* kept = nullptr) {
  std::vector<std::string> ignored;
  auto s = gcr::apply_edits(spec, edits, fake_host(), kept != nullptr ? *kept : ignored);
  REQUIRE(s.ok());
  return spec;
}

std::string apply_error(const ContainerEdits& edits) {
  Json spec = Json::object();
  std::vector<std::string> kept;
  auto s = gcr::apply_edits(spec, edits, fake_host(), kept);
  REQUIRE_FALSE(s.ok());
  return s.error().message;
}

std::vector<std::string> destinations(const Json& spec) {
  std::vector<std::string> out;
  for (const auto& m : spec.at("mounts")) out.push_back(m.at("destination"));
  return out;
}

}  // namespace

TEST_CASE("env: replaced in place, new ones appended, the last duplicate wins") {
  ContainerEdits e;
  e.env = {"FOO=new"};
  CHECK(applied({{"process", {{"env", {"FOO=old", "BAR=old"}}}}}, e).at("process").at("env") ==
        Json({"FOO=new", "BAR=old"}));
  ContainerEdits dup;
  dup.env = {"FOO=old", "FOO=new"};
  CHECK(applied(Json::object(), dup).at("process").at("env") == Json({"FOO=new"}));
  // A spec naming the variable twice: runc gives the process the last, so both take the edit.
  CHECK(applied({{"process", {{"env", {"FOO=0", "BAR=1", "FOO=1"}}}}}, e).at("process").at("env") ==
        Json({"FOO=new", "BAR=1", "FOO=new"}));
}

TEST_CASE("a device node from the host: type, numbers, mode and an rwm cgroup rule") {
  ContainerEdits e;
  e.device_nodes = {device_node("/dev/null")};
  const Json spec = applied(Json::object(), e);
  CHECK(spec.at("linux").at("devices") ==
        Json::parse(R"([{"path":"/dev/null","type":"c","major":1,"minor":3,"fileMode":438}])"));
  CHECK(spec.at("linux").at("resources").at("devices") ==
        Json::parse(R"([{"allow":true,"type":"c","major":1,"minor":3,"access":"rwm"}])"));
}

TEST_CASE("host path, explicit permissions, process uid/gid, replace by path") {
  ContainerEdits e;
  gcr::DeviceNode n;
  n.path = "/dev/gpu0";
  n.host_path = "/host/dev/gpu0";
  n.permissions = "rw";
  e.device_nodes = {n};
  const Json spec = applied(
      {{"process", {{"user", {{"uid", 1000}, {"gid", 1000}}}}},
       {"linux",
        {{"devices", {{{"path", "/dev/gpu0"}, {"type", "c"}, {"major", 1}, {"minor", 1}}}}}}},
      e);
  CHECK(
      spec.at("linux").at("devices") ==
      Json::parse(
          R"([{"path":"/dev/gpu0","type":"c","major":195,"minor":0,"fileMode":432,"uid":1000,"gid":1000}])"));
  CHECK(spec.at("linux").at("resources").at("devices").at(0).at("access") == "rw");
}

TEST_CASE("a minimally specified node needs no host node; permissions none gives an empty access") {
  ContainerEdits e;
  gcr::DeviceNode n = char_node("/dev/nil", 1, 3);
  n.permissions = "none";
  e.device_nodes = {n};
  const Json spec = applied(Json::object(), e);
  CHECK(spec.at("linux").at("devices").at(0).contains("fileMode") == false);
  CHECK(spec.at("linux").at("resources").at("devices").at(0).at("access") == "");
}

TEST_CASE("a node with its type, numbers and mode (discovery's) is not looked up on the host") {
  ContainerEdits e;
  gcr::DeviceNode n = char_node("/dev/nvidia0", 195, 0);
  n.file_mode = 0666;
  e.device_nodes = {n};
  int looked_up = 0;
  const gcr::NodeStatFn counting = [&](const std::string& path) {
    ++looked_up;
    return fake_host()(path);
  };
  Json spec = Json::object();
  std::vector<std::string> kept;
  REQUIRE(gcr::apply_edits(spec, e, counting, kept).ok());
  CHECK(looked_up == 0);
  CHECK(spec.at("linux").at("devices").at(0) ==
        Json::parse(R"({"path":"/dev/nvidia0","type":"c","major":195,"minor":0,"fileMode":438})"));
  n.file_mode.reset();
  e.device_nodes = {n};
  REQUIRE(gcr::apply_edits(spec, e, counting, kept).ok());
  CHECK(looked_up == 1);
}

TEST_CASE(
    "device errors: missing host node, not a device, type mismatch; FIFOs get no numbers or rule") {
  ContainerEdits missing;
  missing.device_nodes = {device_node("/dev/missing")};
  CHECK(apply_error(missing).find("cannot stat host device") != std::string::npos);
  ContainerEdits regular;
  regular.device_nodes = {device_node("/etc/passwd")};
  CHECK(apply_error(regular).find("not a device node") != std::string::npos);
  ContainerEdits mismatch;
  gcr::DeviceNode b;
  b.path = "/dev/null";
  b.type = "b";
  mismatch.device_nodes = {b};
  CHECK(apply_error(mismatch).find("host type mismatch") != std::string::npos);
  ContainerEdits fifo;
  fifo.device_nodes = {device_node("/tmp/fifo")};
  const Json spec = applied(Json::object(), fifo);
  CHECK(spec.at("linux").at("devices").at(0) ==
        Json::parse(R"({"path":"/tmp/fifo","type":"p","fileMode":384})"));
  CHECK_FALSE(spec.at("linux").contains("resources"));
}

TEST_CASE("identical cgroup rules are not repeated when edits are applied twice") {
  ContainerEdits e;
  e.device_nodes = {device_node("/dev/null")};
  Json spec = applied(applied(Json::object(), e), e);
  CHECK(spec.at("linux").at("devices").size() == 1);
  CHECK(spec.at("linux").at("resources").at("devices").size() == 1);
}

TEST_CASE("mounts: the spec's own mount at a destination is kept, then stably sorted by depth") {
  ContainerEdits e;
  e.mounts = {gcr::Mount{"/src", "/dest/edit", "", {}}};
  const Json sorted = applied(
      {{"mounts", {{{"destination", "/dest/path/b"}}, {{"destination", "/dest/path/a"}}}}}, e);
  CHECK(destinations(sorted) ==
        std::vector<std::string>{"/dest/edit", "/dest/path/b", "/dest/path/a"});
  ContainerEdits same_depth;
  same_depth.mounts = {{"/src", "/dest/path/a", "bind", {"ro"}}};
  const Json appended =
      applied({{"mounts", {{{"destination", "/dest/path/c"}}, {{"destination", "/dest/path/b"}}}}},
              same_depth);
  CHECK(destinations(appended) ==
        std::vector<std::string>{"/dest/path/c", "/dest/path/b", "/dest/path/a"});
  CHECK(appended.at("mounts").at(2) ==
        Json::parse(
            R"({"destination":"/dest/path/a","type":"bind","source":"/src","options":["ro"]})"));
  ContainerEdits replace;
  replace.mounts = {{"/new", "/dest/path/b", "", {}}};
  std::vector<std::string> kept;
  const Json users = applied({{"mounts", {{{"destination", "/dest/path/b"}, {"source", "/old"}}}}},
                             replace, &kept);
  CHECK(users.at("mounts").size() == 1);
  CHECK(users.at("mounts").at(0).at("source") == "/old");
  CHECK(kept == std::vector<std::string>{"/dest/path/b"});
  kept.clear();
  const Json twice = applied(applied(Json::object(), replace), replace, &kept);
  CHECK(twice.at("mounts").size() == 1);
  CHECK(kept.empty());
}

TEST_CASE(
    "hooks append by kind; additional GIDs deduplicated and 0 skipped; intelRdt and netDevices") {
  ContainerEdits e;
  e.hooks = {{"createContainer", "/bin/h", {"h", "x"}, {"A=1"}, 5},
             {"poststop", "/bin/p", {}, {}, std::nullopt}};
  e.additional_gids = {4, 5, 6, 5, 6, 4, 0};
  e.intel_rdt = Json{{"closID", "clos-1"}};
  e.net_devices = {{"eno1", "netdev2"}, {"eno2", "netdev1"}};
  const Json spec = applied({{"hooks", {{"createContainer", {{{"path", "/bin/existing"}}}}}},
                             {"process", {{"user", {{"additionalGids", {4}}}}}},
                             {"linux", {{"netDevices", {{"eno1", {{"name", "netdev1"}}}}}}}},
                            e);
  CHECK(
      spec.at("hooks").at("createContainer") ==
      Json::parse(
          R"([{"path":"/bin/existing"},{"path":"/bin/h","args":["h","x"],"env":["A=1"],"timeout":5}])"));
  CHECK(
      spec.at("hooks").at("poststop") ==
      Json::parse(
          R"([{"path":"/bin/p","env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}])"));
  CHECK(spec.at("process").at("user").at("additionalGids") == Json({4, 5, 6}));
  CHECK(spec.at("linux").at("intelRdt") == Json{{"closID", "clos-1"}});
  CHECK(spec.at("linux").at("netDevices") ==
        Json::parse(R"({"eno1":{"name":"netdev2"},"eno2":{"name":"netdev1"}})"));
}

TEST_CASE("a char node without a minor gets minor 0, never a wildcard rule") {
  ContainerEdits e;
  gcr::DeviceNode n;
  n.path = "/dev/nvidia1";
  n.type = "c";
  n.major = 195;
  e.device_nodes = {n};
  const Json spec = applied(Json::object(), e);
  CHECK(spec.at("linux").at("devices").at(0).at("minor") == 0);
  CHECK(spec.at("linux").at("resources").at("devices").at(0) ==
        Json::parse(R"({"allow":true,"type":"c","major":195,"minor":0,"access":"rwm"})"));
}

TEST_CASE("every hook gets an explicit environment without the loader's variables") {
  ContainerEdits e;
  e.hooks = {{"createContainer", "/bin/h", {}, {}, std::nullopt},
             {"createContainer",
              "/bin/i",
              {},
              {"LD_PRELOAD=/proc/self/cwd/poc.so", "A=1", "GCONV_PATH=/x", "MALLOC_CHECK_=3",
               "LD_LIBRARY_PATH=/y"},
              std::nullopt},
             {"prestart", "/bin/j", {}, {"LD_AUDIT=/a.so"}, std::nullopt}};
  const Json hooks = applied(Json::object(), e).at("hooks");
  const Json minimal = Json{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"};
  CHECK(hooks.at("createContainer").at(0).at("env") == minimal);
  CHECK(hooks.at("createContainer").at(1).at("env") == Json{"A=1"});
  CHECK(hooks.at("prestart").at(0).at("env") == minimal);
}

TEST_CASE("a hook the spec already runs with the same program and arguments is not added again") {
  // containerd 2.x applies a CDI annotation's device itself, then the shim resolves it again:
  // NVIDIA's spec's hooks ran twice (two ldconfig runs).
  ContainerEdits e;
  e.hooks = {{"createContainer",
              "/usr/bin/nvidia-cdi-hook",
              {"nvidia-cdi-hook", "update-ldcache"},
              {},
              std::nullopt},
             {"createContainer",
              "/usr/bin/nvidia-cdi-hook",
              {"nvidia-cdi-hook", "chmod"},
              {},
              std::nullopt}};
  const Json engine = {{"hooks",
                        {{"createContainer",
                          {{{"path", "/usr/bin/nvidia-cdi-hook"},
                            {"args", {"nvidia-cdi-hook", "update-ldcache"}}}}}}}};
  const Json hooks = applied(engine, e).at("hooks").at("createContainer");
  REQUIRE(hooks.size() == 2);
  // The one there gets the explicit environment every hook of ours gets.
  CHECK(hooks.at(0).at("args") == Json{"nvidia-cdi-hook", "update-ldcache"});
  CHECK(hooks.at(0).at("env") ==
        Json{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"});
  CHECK(hooks.at(1).at("args") == Json{"nvidia-cdi-hook", "chmod"});
  // Hooks that differ in their environment or timeout both run (two devices' own set-ups).
  ContainerEdits two;
  two.hooks = {
      {"createContainer", "/bin/echo", {"vendor-hook", "setup"}, {"DEVICE=a"}, std::nullopt},
      {"createContainer", "/bin/echo", {"vendor-hook", "setup"}, {"DEVICE=b"}, std::nullopt},
      {"createContainer", "/bin/echo", {"vendor-hook", "setup"}, {"DEVICE=b"}, 5}};
  CHECK(applied(Json::object(), two).at("hooks").at("createContainer").size() == 3);
}
