// gpu-ctk runtime configure planning: what each engine's files become.
#include <doctest/doctest.h>
#include <sys/stat.h>

#include "engines/engines.h"
#include "json/strict_json.h"
#include "test_support.h"
#include "toml/toml.h"

using gcr::ConfigureOptions;
using gcr::ExistingFile;
using gcr::FileChange;
using gcr::Json;

namespace {

ConfigureOptions options(const std::string& engine) {
  ConfigureOptions o;
  o.engine = engine;
  o.config_path = engine == "docker"       ? "/e/daemon.json"
                  : engine == "containerd" ? "/e/config.toml"
                                           : "/e/crio.conf";
  return o;
}

std::vector<FileChange> must(const gcr::Result<std::vector<FileChange>>& r) {
  REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
  return *r;
}

toml::table toml_of(const FileChange& c) {
  REQUIRE(c.content);
  return toml::parse(*c.content);
}

const FileChange* change_to(const std::vector<FileChange>& changes, const std::string& path) {
  for (const auto& c : changes) {
    if (c.path == path) return &c;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("docker: runtime, args, default and cdi added; every other key kept; twice is a no-op") {
  auto o = options("docker");
  o.set_as_default = true;
  o.cdi = true;
  o.runtime_args = {"--gpu-config=/etc/g.toml"};
  const ExistingFile before{
      "/e/daemon.json",
      R"({"log-level":"warn","runtimes":{"other":{"path":"/x"}},"features":{"buildkit":true}})"};
  const auto changes = must(gcr::plan_docker(o, before));
  REQUIRE(changes.size() == 1);
  const Json doc = Json::parse(*changes[0].content);
  CHECK(doc["log-level"] == "warn");
  CHECK(doc["runtimes"]["other"]["path"] == "/x");
  CHECK(
      doc["runtimes"]["nvidia"] ==
      Json::parse(
          R"({"path":"/usr/bin/gpu-container-runtime","runtimeArgs":["--gpu-config=/etc/g.toml"]})"));
  CHECK(doc["default-runtime"] == "nvidia");
  CHECK(doc["features"] == Json::parse(R"({"buildkit":true,"cdi":true})"));
  CHECK(must(gcr::plan_docker(o, ExistingFile{"/e/daemon.json", *changes[0].content})).empty());
  const auto none =
      must(gcr::plan_docker(options("docker"), ExistingFile{"/e/daemon.json", std::nullopt}));
  CHECK(Json::parse(*none[0].content) ==
        Json::parse(R"({"runtimes":{"nvidia":{"path":"/usr/bin/gpu-container-runtime"}}})"));
}

TEST_CASE("docker: remove undoes what configure added") {
  auto o = options("docker");
  o.set_as_default = true;
  o.cdi = true;
  const ExistingFile before{"/e/daemon.json", R"({"log-level":"warn"})"};
  const auto added = must(gcr::plan_docker(o, before));
  o.remove = true;
  const auto removed = must(gcr::plan_docker(o, ExistingFile{"/e/daemon.json", *added[0].content}));
  CHECK(Json::parse(*removed[0].content) == Json::parse(*before.content));
  // A daemon.json configure made goes with --remove, as NVIDIA's does (`{}` was left).
  o.remove = false;
  const auto made = must(gcr::plan_docker(o, ExistingFile{"/e/daemon.json", std::nullopt}));
  o.remove = true;
  const auto gone = must(gcr::plan_docker(o, ExistingFile{"/e/daemon.json", *made[0].content}));
  REQUIRE(gone.size() == 1);
  CHECK(Json::parse(*gone[0].content) == Json::object());
  CHECK(gone[0].delete_if_made);
  CHECK_FALSE(removed[0].delete_if_made);  // the user's log-level is left
}

TEST_CASE("a .bak already there is kept: the file before the first change, or the user's own") {
  gcr::test::TempDir dir;
  const std::string file = dir / "daemon.json";
  gcr::test::write_file(file, "{\"log-level\": \"warn\"}\n");
  REQUIRE(gcr::apply_changes({{file, "{\"a\": 1}\n"}}).ok());
  CHECK(gcr::test::read_file(file + ".bak") == "{\"log-level\": \"warn\"}\n");
  // A second change (configure again, with --set-as-default) keeps the first backup.
  REQUIRE(gcr::apply_changes({{file, "{\"a\": 2}\n"}}).ok());
  CHECK(gcr::test::read_file(file) == "{\"a\": 2}\n");
  CHECK(gcr::test::read_file(file + ".bak") == "{\"log-level\": \"warn\"}\n");
  // The user's own .bak, even a dangling link, is not touched.
  const std::string other = dir / "config.toml";
  gcr::test::write_file(other, "version = 2\n");
  gcr::test::make_symlink(dir / "nowhere", other + ".bak");
  REQUIRE(gcr::apply_changes({{other, "version = 3\n"}}).ok());
  CHECK(gcr::test::read_file(other) == "version = 3\n");
  struct stat st {};
  REQUIRE(::lstat((other + ".bak").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK_FALSE(gcr::test::exists(dir / "nowhere"));
}

TEST_CASE("--remove: a file configure made is deleted; the user's, or one through a link, kept") {
  gcr::test::TempDir dir;
  const std::string made = dir / "made.json";
  const std::string theirs = dir / "theirs.json";
  const std::string real = dir / "real.json";
  const std::string link = dir / "link.json";
  for (const auto& path : {made, theirs, real}) gcr::test::write_file(path, "{\"x\": 1}\n");
  gcr::test::write_file(theirs + ".bak", "{}\n");  // configure changed a file that was there
  gcr::test::make_symlink(real, link);
  std::vector<FileChange> changes;
  for (const auto& path : {made, theirs, link}) changes.push_back({path, "{}\n", true, true});
  REQUIRE(gcr::apply_changes(changes).ok());
  CHECK_FALSE(gcr::test::exists(made));
  CHECK(gcr::test::read_file(theirs) == "{}\n");
  CHECK(gcr::test::read_file(real) == "{}\n");  // written where the link leads, the link kept
  CHECK(gcr::test::read_file(link) == "{}\n");
}

// containerd fails to start on a plain import whose file is missing ("failed to load TOML"):
// the drop-in is imported by a pattern only its name matches, and an earlier version's plain
// path becomes that pattern, or goes with --remove, byte for byte.
TEST_CASE("containerd: ours imported by a pattern; an earlier plain import upgraded or removed") {
  const ExistingFile no_drop{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  auto o = options("containerd");
  const std::string rest = "# ours\nversion = 2\n";
  const std::string plain = "imports = [\"/e/conf.d/99-gpu-container-runtime.toml\"]\n" + rest;
  const auto made = must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", rest}, no_drop));
  const std::string pattern = *change_to(made, "/e/config.toml")->content;
  CHECK(pattern == "imports = [\"/e/conf.d/99-gpu-container-runtime*.toml\"]\n" + rest);
  const ExistingFile drop{no_drop.path, *change_to(made, no_drop.path)->content};
  const auto upgraded = must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", plain}, drop));
  REQUIRE(upgraded.size() == 1);
  CHECK(*change_to(upgraded, "/e/config.toml")->content == pattern);
  CHECK(must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", pattern}, drop)).empty());
  const std::string both =
      "imports = [\"/x/a.toml\", \"/e/conf.d/99-gpu-container-runtime.toml\"]\n" + rest;
  const auto kept_order = must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", both}, drop));
  CHECK(*change_to(kept_order, "/e/config.toml")->content ==
        "imports = [\"/x/a.toml\", \"/e/conf.d/99-gpu-container-runtime*.toml\"]\n" + rest);
  o.remove = true;
  for (const auto& main : {plain, pattern}) {
    const auto removed = must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", main}, drop));
    CHECK(*change_to(removed, "/e/config.toml")->content == rest);
  }
  // The upgrade keeps no backup: a file configure made is still told as one by --remove.
  o.remove = false;
  CHECK_FALSE(change_to(upgraded, "/e/config.toml")->backup);
  CHECK(change_to(made, "/e/config.toml")->backup);
  // The plain path twice, or beside the pattern: every plain one goes, the pattern stays once.
  const std::string plain_path = "\"/e/conf.d/99-gpu-container-runtime.toml\"";
  const std::string pattern_path = "\"/e/conf.d/99-gpu-container-runtime*.toml\"";
  for (const auto& list : {plain_path + ", \"/x/a.toml\", " + plain_path,
                           pattern_path + ", \"/x/a.toml\", " + plain_path}) {
    const auto fixed = must(gcr::plan_containerd(
        o, ExistingFile{"/e/config.toml", "imports = [" + list + "]\n" + rest}, drop));
    CHECK(*change_to(fixed, "/e/config.toml")->content ==
          "imports = [" + pattern_path + ", \"/x/a.toml\"]\n" + rest);
  }
  // Imported as it is: a drop-in named otherwise (no .toml), one whose path holds pattern
  // characters, a relative one (containerd 1.6 expands a relative pattern from its working
  // directory).
  for (const std::string odd : {"/e/gpu.conf", "/e/[x]/99.toml", "conf.d/99.toml"}) {
    const auto odd_made = must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", rest},
                                                    ExistingFile{odd, std::nullopt}));
    CHECK(*change_to(odd_made, "/e/config.toml")->content ==
          "imports = [\"" + odd + "\"]\n" + rest);
  }
}

TEST_CASE("containerd: ours added to a list of imports in its line, comments kept; remove undoes") {
  const std::string main =
      "# Managed by our team\nversion = 3\nimports = [\"/e/extra.toml\"]\n\n"
      "[plugins.\"io.containerd.cri.v1.runtime\".containerd.runtimes.runc.options]\n"
      "  SystemdCgroup = true   # required on cgroup v2\n";
  const ExistingFile no_drop{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  auto o = options("containerd");
  const auto changes = must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", main}, no_drop));
  const std::string edited = *change_to(changes, "/e/config.toml")->content;
  std::string expected = main;
  expected.replace(expected.find("imports = [\"/e/extra.toml\"]"), 27,
                   "imports = [\"/e/extra.toml\", \"/e/conf.d/99-gpu-container-runtime*.toml\"]");
  CHECK(edited == expected);
  o.remove = true;
  const auto undone = must(
      gcr::plan_containerd(o, ExistingFile{"/e/config.toml", edited},
                           ExistingFile{no_drop.path, *change_to(changes, no_drop.path)->content}));
  CHECK(*change_to(undone, "/e/config.toml")->content == main);
  // A config.toml configure made (there was none) goes with --remove, as NVIDIA's does.
  o.remove = false;
  const auto made =
      must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", std::nullopt}, no_drop));
  o.remove = true;
  const auto gone = must(gcr::plan_containerd(
      o, ExistingFile{"/e/config.toml", *change_to(made, "/e/config.toml")->content},
      ExistingFile{no_drop.path, *change_to(made, no_drop.path)->content}));
  REQUIRE(change_to(gone, "/e/config.toml") != nullptr);
  CHECK(change_to(gone, "/e/config.toml")->delete_if_made);
  CHECK(*change_to(gone, "/e/config.toml")->content == "version = 2\n");
  CHECK_FALSE(change_to(gone, no_drop.path)->content);
}

TEST_CASE("docker: a malformed daemon.json is refused with the line") {
  const auto r = gcr::plan_docker(options("docker"),
                                  ExistingFile{"/e/daemon.json", "{\n  \"a\": 1,\n  \"b\": \n}"});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message ==
        "cannot parse /e/daemon.json: not valid JSON at line 4 (byte 21): unexpected character");
  CHECK_FALSE(
      gcr::plan_docker(options("docker"), ExistingFile{"/e/daemon.json", R"({"runtimes": []})"})
          .ok());
}

TEST_CASE("docker: a default-runtime that is not a string is refused, adding and removing") {
  // Found by the engines fuzz target: removing read it as a string and aborted.
  const ExistingFile odd{"/e/daemon.json", R"({"default-runtime": {"cdi": true}})"};
  for (const bool remove : {false, true}) {
    auto o = options("docker");
    o.remove = remove;
    const auto r = gcr::plan_docker(o, odd);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message == "`default-runtime` is not a string (/e/daemon.json)");
  }
}

TEST_CASE(
    "containerd v2: a drop-in with the whole CRI table, options copied from the default runtime") {
  auto o = options("containerd");
  o.set_as_default = true;
  o.cdi = true;
  const std::string main =
      "version = 2\n# keep me\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  sandbox_image = "
      "\"pause:3.6\"\n"
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc]\n  runtime_type = "
      "\"io.containerd.runc.v2\"\n"
      "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n  SystemdCgroup = "
      "true\n";
  const auto changes = must(
      gcr::plan_containerd(o, ExistingFile{"/e/config.toml", main},
                           ExistingFile{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt}));
  REQUIRE(changes.size() == 2);
  const auto drop = toml_of(*change_to(changes, "/e/conf.d/99-gpu-container-runtime.toml"));
  const auto cri = drop["plugins"]["io.containerd.grpc.v1.cri"];
  CHECK(drop["version"].value_or(0) == 2);
  CHECK(cri["sandbox_image"].value_or(std::string()) == "pause:3.6");
  CHECK(cri["enable_cdi"].value_or(false));
  CHECK(cri["containerd"]["default_runtime_name"].value_or(std::string()) == "nvidia");
  const auto ours = cri["containerd"]["runtimes"]["nvidia"];
  CHECK(ours["runtime_type"].value_or(std::string()) == "io.containerd.runc.v2");
  CHECK(ours["options"]["BinaryName"].value_or(std::string()) == "/usr/bin/gpu-container-runtime");
  CHECK(ours["options"]["SystemdCgroup"].value_or(false));
  CHECK(ours["container_annotations"][0].value_or(std::string()) == "cdi.k8s.io/*");
  const std::string new_main = *change_to(changes, "/e/config.toml")->content;
  CHECK(new_main == "imports = [\"/e/conf.d/99-gpu-container-runtime*.toml\"]\n" + main);
  const auto again = must(gcr::plan_containerd(
      o, ExistingFile{"/e/config.toml", new_main},
      ExistingFile{"/e/conf.d/99-gpu-container-runtime.toml",
                   *change_to(changes, "/e/conf.d/99-gpu-container-runtime.toml")->content}));
  CHECK(again.empty());
  o.remove = true;
  const auto removed = must(
      gcr::plan_containerd(o, ExistingFile{"/e/config.toml", new_main},
                           ExistingFile{"/e/conf.d/99-gpu-container-runtime.toml", "x = 1\n"}));
  CHECK(removed.size() == 2);
  CHECK_FALSE(change_to(removed, "/e/conf.d/99-gpu-container-runtime.toml")->content);
  CHECK(*change_to(removed, "/e/config.toml")->content == main);
}

TEST_CASE("containerd: a file that lists no runtime keeps containerd's built-in runc beside ours") {
  // Debian's packaged /etc/containerd/config.toml: a CRI table without runtimes. A drop-in
  // listing ours alone replaced containerd 1.7's built-in runc, and its CRI plugin failed to load.
  const std::string debian =
      "version = 2\n\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n"
      "    [plugins.\"io.containerd.grpc.v1.cri\".cni]\n      bin_dir = \"/usr/lib/cni\"\n";
  const ExistingFile no_drop{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  const auto changes = must(
      gcr::plan_containerd(options("containerd"), ExistingFile{"/e/config.toml", debian}, no_drop));
  const auto drop = toml_of(*change_to(changes, no_drop.path));
  const auto cri = drop["plugins"]["io.containerd.grpc.v1.cri"];
  CHECK(cri["cni"]["bin_dir"].value_or(std::string()) == "/usr/lib/cni");
  const auto runtimes = cri["containerd"]["runtimes"];
  CHECK(runtimes["runc"]["runtime_type"].value_or(std::string()) == "io.containerd.runc.v2");
  CHECK(runtimes["nvidia"]["options"]["BinaryName"].value_or(std::string()) ==
        "/usr/bin/gpu-container-runtime");
  // A file that lists runtimes of its own is left with them alone (runc is not added).
  const auto listed = must(gcr::plan_containerd(
      options("containerd"),
      ExistingFile{"/e/config.toml",
                   "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                   "default_runtime_name = \"crun\"\n[plugins.\"io.containerd.grpc.v1.cri\"."
                   "containerd.runtimes.crun]\nruntime_type = \"io.containerd.runc.v2\"\n"},
      no_drop));
  const auto listed_drop = toml_of(*change_to(listed, no_drop.path));
  const auto listed_runtimes =
      listed_drop["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"];
  CHECK_FALSE(listed_runtimes["runc"]);
  CHECK(listed_runtimes["crun"].is_table());
}

TEST_CASE("containerd v1: --remove takes the built-in runc it wrote with ours") {
  const ExistingFile no_drop{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  const std::string v1 = "[plugins.cri]\nsandbox_image = \"x\"\n";
  auto o = options("containerd");
  const auto added = must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", v1}, no_drop));
  CHECK(toml_of(added[0])["plugins"]["cri"]["containerd"]["runtimes"]["runc"].is_table());
  o.remove = true;
  const auto removed =
      must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", *added[0].content}, no_drop));
  CHECK(toml_of(removed[0]) == toml::parse(v1));
}

TEST_CASE("containerd v3, a missing file (v2), v1 in place, existing imports kept") {
  const ExistingFile no_drop{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  auto v3 = must(gcr::plan_containerd(options("containerd"),
                                      ExistingFile{"/e/config.toml", "version = 3\n"}, no_drop));
  CHECK(toml_of(*change_to(
      v3,
      no_drop.path))["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]["runtimes"]["nvidia"]
            .is_table());
  auto missing = must(gcr::plan_containerd(options("containerd"),
                                           ExistingFile{"/e/config.toml", std::nullopt}, no_drop));
  CHECK(*change_to(missing, "/e/config.toml")->content ==
        "imports = [\"/e/conf.d/99-gpu-container-runtime*.toml\"]\nversion = 2\n");
  auto v1 = must(gcr::plan_containerd(
      options("containerd"),
      ExistingFile{"/e/config.toml", "[plugins.cri]\nstream_server_port = \"10010\"\n"}, no_drop));
  REQUIRE(v1.size() == 1);
  const auto v1doc = toml_of(v1[0]);
  CHECK(v1doc["plugins"]["cri"]["stream_server_port"].value_or(std::string()) == "10010");
  CHECK(v1doc["plugins"]["cri"]["containerd"]["runtimes"]["nvidia"]["options"]["Runtime"].value_or(
            std::string()) == "/usr/bin/gpu-container-runtime");
  auto imports = must(gcr::plan_containerd(
      options("containerd"),
      ExistingFile{"/e/config.toml", "version = 2\nimports = [\"/e/other.toml\"]\n"}, no_drop));
  const auto main = toml_of(*change_to(imports, "/e/config.toml"));
  CHECK(main["imports"].as_array()->size() == 2);
  const auto bad = gcr::plan_containerd(
      options("containerd"), ExistingFile{"/e/config.toml", "version = 2\n[plugins\n"}, no_drop);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("cannot parse /e/config.toml: invalid TOML at line 2") == 0);
}

TEST_CASE("containerd 2.3's own default file (version 4): a version 4 drop-in its imports name") {
  // What `containerd config default` of containerd 2.3.4 writes: version 4, imports
  // /etc/containerd/conf.d/*.toml, enable_cdi, the server settings moved into plugins.
  const std::string written = gcr::test::read_file(
      gcr::test::test_source("data/engines/containerd-2.3.4-config-default.toml"));
  ConfigureOptions o = options("containerd");
  o.config_path = "/etc/containerd/config.toml";
  o.set_as_default = true;
  const ExistingFile drop{"/etc/containerd/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  const auto changes = must(gcr::plan_containerd(o, ExistingFile{o.config_path, written}, drop));
  // The main file already imports the drop-in by its pattern: it stays byte for byte.
  REQUIRE(changes.size() == 1);
  CHECK(changes[0].path == drop.path);
  const auto doc = toml_of(changes[0]);
  CHECK(doc["version"].value_or(int64_t{0}) == 4);
  const auto cri = doc["plugins"]["io.containerd.cri.v1.runtime"];
  CHECK(cri["containerd"]["default_runtime_name"].value_or(std::string()) == "nvidia");
  CHECK(cri["containerd"]["runtimes"]["nvidia"]["options"]["BinaryName"].value_or(std::string()) ==
        "/usr/bin/gpu-container-runtime");
  // Copied from the file's runc: its options (SystemdCgroup and the rest), and CDI as it was.
  CHECK(cri["containerd"]["runtimes"]["nvidia"]["runtime_type"].value_or(std::string()) ==
        "io.containerd.runc.v2");
  CHECK(cri["enable_cdi"].value_or(false));
  // A relative pattern counts from the main file's directory; a pattern that does not match
  // gets our import line.
  const auto relative = must(gcr::plan_containerd(
      o, ExistingFile{o.config_path, "version = 4\nimports = [\"conf.d/*.toml\"]\n"}, drop));
  CHECK(change_to(relative, o.config_path) == nullptr);
  const auto other = must(gcr::plan_containerd(
      o, ExistingFile{o.config_path, "version = 4\nimports = [\"/etc/other/*.toml\"]\n"}, drop));
  REQUIRE(change_to(other, o.config_path) != nullptr);
  CHECK(toml_of(*change_to(other, o.config_path))["imports"].as_array()->size() == 2);
  // Removal takes the drop-in away and leaves a pattern import alone.
  o.remove = true;
  const auto removed = must(gcr::plan_containerd(o, ExistingFile{o.config_path, written},
                                                 ExistingFile{drop.path, *changes[0].content}));
  REQUIRE(removed.size() == 1);
  CHECK(removed[0].path == drop.path);
  CHECK(!removed[0].content);
  const auto five = gcr::plan_containerd(o, ExistingFile{o.config_path, "version = 5\n"}, drop);
  REQUIRE_FALSE(five.ok());
  CHECK(five.error().message == "`version` must be 1, 2, 3 or 4 (/etc/containerd/config.toml)");
}

TEST_CASE("containerd: the empty imports list containerd config default writes is a list") {
  const ExistingFile no_drop{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  auto empty = must(
      gcr::plan_containerd(options("containerd"),
                           ExistingFile{"/e/config.toml", "imports = []\nversion = 2\n"}, no_drop));
  const auto main = toml_of(*change_to(empty, "/e/config.toml"));
  REQUIRE(main["imports"].as_array() != nullptr);
  CHECK(main["imports"].as_array()->size() == 1);
  const auto mixed = gcr::plan_containerd(
      options("containerd"), ExistingFile{"/e/config.toml", "imports = [\"a\", 1]\nversion = 2\n"},
      no_drop);
  REQUIRE_FALSE(mixed.ok());
  CHECK(mixed.error().message.find("`imports` must be a list of file names") != std::string::npos);
}

TEST_CASE("containerd: `imports = []` takes ours in place, comments kept; remove puts it back") {
  const ExistingFile no_drop{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  const std::string stock =
      "disabled_plugins = []\n"
      "imports = []\n"
      "oom_score = 0\n"
      "# our cluster: do not change the root\n"
      "root = \"/var/lib/containerd\"\n"
      "version = 2\n";
  const ExistingFile main{"/e/config.toml", stock};
  const auto changes = must(gcr::plan_containerd(options("containerd"), main, no_drop));
  const auto* written = change_to(changes, main.path);
  REQUIRE(written != nullptr);
  std::string expected = stock;
  expected.replace(expected.find("imports = []"), 12,
                   "imports = [\"/e/conf.d/99-gpu-container-runtime*.toml\"]");
  CHECK(*written->content == expected);
  auto remove = options("containerd");
  remove.remove = true;
  const auto undone = must(
      gcr::plan_containerd(remove, ExistingFile{main.path, *written->content},
                           ExistingFile{no_drop.path, *change_to(changes, no_drop.path)->content}));
  CHECK(*change_to(undone, main.path)->content == stock);
}

TEST_CASE("crio: a drop-in with runtime_path and runtime_type; remove deletes it") {
  auto o = options("crio");
  o.set_as_default = true;
  const ExistingFile none{gcr::drop_in_path(o), std::nullopt};
  CHECK(none.path == "/e/crio.conf.d/99-gpu-container-runtime.conf");
  const auto changes = must(gcr::plan_crio(o, none));
  const auto doc = toml_of(changes[0]);
  CHECK(doc["crio"]["runtime"]["default_runtime"].value_or(std::string()) == "nvidia");
  CHECK(doc["crio"]["runtime"]["runtimes"]["nvidia"]["runtime_path"].value_or(std::string()) ==
        "/usr/bin/gpu-container-runtime");
  CHECK(doc["crio"]["runtime"]["runtimes"]["nvidia"]["runtime_type"].value_or(std::string()) ==
        "oci");
  CHECK(must(gcr::plan_crio(o, ExistingFile{none.path, *changes[0].content})).empty());
  o.remove = true;
  CHECK_FALSE(must(gcr::plan_crio(o, ExistingFile{none.path, *changes[0].content}))[0].content);
}

TEST_CASE("crio: ours copies the handler CRI-O ran (monitor_path kept), default then runc, crun") {
  // What CRI-O's packages (pkgs.k8s.io) install as crio.conf.d/10-crio.conf: conmon, crun and
  // runc in /usr/libexec/crio, named only in the handlers. A handler without monitor_path made
  // CRI-O look for conmon in $PATH and refuse to start.
  const ExistingFile packaged{
      "/e/crio.conf.d/10-crio.conf",
      "[crio.image]\nsignature_policy = \"/etc/crio/policy.json\"\n\n[crio.runtime]\n"
      "default_runtime = \"crun\"\n\n[crio.runtime.runtimes.crun]\n"
      "runtime_path = \"/usr/libexec/crio/crun\"\nruntime_root = \"/run/crun\"\n"
      "monitor_path = \"/usr/libexec/crio/conmon\"\n"
      "allowed_annotations = [\"io.containers.trace-syscall\"]\n\n"
      "[crio.runtime.runtimes.runc]\nruntime_path = \"/usr/libexec/crio/runc\"\n"
      "runtime_root = \"/run/runc\"\nmonitor_path = \"/usr/libexec/crio/conmon\"\n"};
  auto o = options("crio");
  const ExistingFile none{gcr::drop_in_path(o), std::nullopt};
  const auto changes =
      must(gcr::plan_crio(o, none, {}, {ExistingFile{"/e/crio.conf", std::nullopt}, packaged}));
  const auto doc = toml_of(changes[0]);
  const auto ours = doc["crio"]["runtime"]["runtimes"]["nvidia"];
  CHECK(ours["monitor_path"].value_or(std::string()) == "/usr/libexec/crio/conmon");
  CHECK(ours["runtime_root"].value_or(std::string()) == "/run/crun");
  CHECK(ours["allowed_annotations"][0].value_or(std::string()) == "io.containers.trace-syscall");
  CHECK(ours["runtime_path"].value_or(std::string()) == "/usr/bin/gpu-container-runtime");
  CHECK(ours["runtime_type"].value_or(std::string()) == "oci");
  CHECK_FALSE(doc["crio"]["runtime"]["default_runtime"]);
  // A later file's keys win key by key; a default naming ours (from --set-as-default) is passed
  // over for runc.
  const ExistingFile later{"/e/crio.conf.d/20-local.conf",
                           "[crio.runtime]\ndefault_runtime = \"nvidia\"\n"
                           "[crio.runtime.runtimes.runc]\nmonitor_path = \"/opt/conmon\"\n"};
  const auto again = must(gcr::plan_crio(o, none, {}, {packaged, later}));
  const auto doc2 = toml_of(again[0]);
  CHECK(doc2["crio"]["runtime"]["runtimes"]["nvidia"]["monitor_path"].value_or(std::string()) ==
        "/opt/conmon");
  CHECK(doc2["crio"]["runtime"]["runtimes"]["nvidia"]["runtime_root"].value_or(std::string()) ==
        "/run/runc");
  // What would run another program than ours is not copied: the handler's programs per
  // platform, and inheriting the default handler (its path too).
  const ExistingFile inheriting{
      "/e/crio.conf",
      "[crio.runtime.runtimes.crun]\nruntime_path = \"/usr/bin/crun\"\n"
      "inherit_default_runtime = true\n"
      "[crio.runtime.runtimes.crun.platform_runtime_paths]\n\"linux/amd64\" = \"/usr/bin/crun\"\n"};
  const auto copied = toml_of(must(gcr::plan_crio(o, none, {}, {inheriting}))[0]);
  const auto handler = copied["crio"]["runtime"]["runtimes"]["nvidia"];
  CHECK_FALSE(handler["inherit_default_runtime"]);
  CHECK_FALSE(handler["platform_runtime_paths"]);
  CHECK(handler["runtime_path"].value_or(std::string()) == "/usr/bin/gpu-container-runtime");
  const auto broken = gcr::plan_crio(o, none, {}, {ExistingFile{"/e/crio.conf", "[crio\n"}});
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().message.find("cannot parse /e/crio.conf") == 0);
}

TEST_CASE("crio: no .bak in crio.conf.d, which CRI-O reads whole; one left there is removed") {
  auto o = options("crio");
  o.set_as_default = true;
  const std::string drop = gcr::drop_in_path(o);
  const ExistingFile no_backup{drop + ".bak", std::nullopt};
  const auto first = must(gcr::plan_crio(o, ExistingFile{drop, std::nullopt}, no_backup));
  REQUIRE(first.size() == 1);
  // Run again without --set-as-default: the drop-in is rewritten, with no backup beside it.
  o.set_as_default = false;
  const auto second = must(gcr::plan_crio(o, ExistingFile{drop, first[0].content}, no_backup));
  REQUIRE(second.size() == 1);
  CHECK_FALSE(second[0].backup);
  CHECK(toml_of(second[0])["crio"]["runtime"]["default_runtime"].value_or(std::string()) == "");
  // The backup an earlier version kept there (read after the drop-in, it undid it) goes, on a
  // configure with nothing else to change and on a removal.
  const ExistingFile left{drop + ".bak", first[0].content};
  const auto cleaned = must(gcr::plan_crio(o, ExistingFile{drop, second[0].content}, left));
  REQUIRE(cleaned.size() == 1);
  CHECK(cleaned[0].path == drop + ".bak");
  CHECK_FALSE(cleaned[0].content);
  o.remove = true;
  const auto removed = must(gcr::plan_crio(o, ExistingFile{drop, second[0].content}, left));
  REQUIRE(removed.size() == 2);
  CHECK_FALSE(removed[0].content);
  CHECK_FALSE(removed[1].content);
}

TEST_CASE("containerd: without --set-as-default a default naming our runtime goes, as NVIDIA's") {
  const ExistingFile no_drop{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  auto o = options("containerd");
  o.set_as_default = true;
  const ExistingFile v1{"/e/config.toml", "[plugins.cri]\n"};
  const auto set = must(gcr::plan_containerd(o, v1, no_drop));
  const ExistingFile v1_set{v1.path, *set[0].content};
  CHECK(toml_of(set[0])["plugins"]["cri"]["containerd"]["default_runtime_name"].value_or(
            std::string()) == "nvidia");
  o.set_as_default = false;
  const auto unset = must(gcr::plan_containerd(o, v1_set, no_drop));
  REQUIRE(unset.size() == 1);
  const auto unset_doc = toml_of(unset[0]);
  CHECK_FALSE(
      unset_doc["plugins"]["cri"]["containerd"].as_table()->contains("default_runtime_name"));
  CHECK(unset_doc["plugins"]["cri"]["containerd"]["runtimes"]["nvidia"].is_table());
  // A version 2 main file an older nvidia-ctk edited in place: its default is not copied.
  const ExistingFile edited{"/e/config.toml",
                            "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
                            "default_runtime_name = \"nvidia\"\n"};
  const auto drop_doc =
      toml_of(*change_to(must(gcr::plan_containerd(o, edited, no_drop)), no_drop.path));
  CHECK_FALSE(drop_doc["plugins"]["io.containerd.grpc.v1.cri"]["containerd"].as_table()->contains(
      "default_runtime_name"));
  // Another runtime's default stays.
  const ExistingFile runc{"/e/config.toml",
                          "[plugins.cri.containerd]\ndefault_runtime_name = \"runc\"\n"};
  const auto runc_doc = toml_of(must(gcr::plan_containerd(o, runc, no_drop))[0]);
  CHECK(runc_doc["plugins"]["cri"]["containerd"]["default_runtime_name"].value_or(std::string()) ==
        "runc");
}

TEST_CASE("drop-ins read after ours are named: those containerd imports, CRI-O's every file") {
  gcr::test::TempDir dir;
  auto containerd = options("containerd");
  containerd.config_path = dir / "config.toml";
  auto crio = options("crio");
  crio.config_path = dir / "crio.conf";
  for (const char* name : {"conf.d/10-mine.toml", "conf.d/99-nvidia.toml", "conf.d/99-zz.txt",
                           "conf.d/99-gpu-container-runtime.toml.bak", "crio.conf.d/00-a.conf",
                           "crio.conf.d/99-nvidia.toml", "crio.conf.d/zz-notes"})
    gcr::test::write_file(dir / name, "");
  gcr::test::make_dirs(dir / "conf.d/99-zz-dir.toml");
  const ExistingFile glob{dir / "config.toml",
                          "version = 2\nimports = [\"" + dir / "conf.d" + "/*.toml\"]\n"};
  CHECK(gcr::drop_ins_read_after(containerd, glob) ==
        std::vector<std::string>{dir / "conf.d/99-nvidia.toml"});
  // Imports naming ours alone (what configure puts in a file without any), or a version 1 file:
  // NVIDIA's is not read.
  const ExistingFile ours_only{dir / "config.toml", "version = 2\nimports = [\"" + dir / "conf.d" +
                                                        "/99-gpu-container-runtime.toml\"]\n"};
  CHECK(gcr::drop_ins_read_after(containerd, ours_only).empty());
  CHECK(gcr::drop_ins_read_after(containerd, ExistingFile{dir / "config.toml", "[plugins]\n"})
            .empty());
  CHECK(gcr::drop_ins_read_after(crio, ExistingFile{}) ==
        std::vector<std::string>{dir / "crio.conf.d/99-nvidia.toml", dir / "crio.conf.d/zz-notes"});
  crio.drop_in = dir / "elsewhere/99.conf";  // not CRI-O's directory: none read after it
  CHECK(gcr::drop_ins_read_after(crio, ExistingFile{}).empty());
  CHECK(gcr::drop_ins_read_after(options("docker"), ExistingFile{}).empty());
}

TEST_CASE("the examples in etc/engines say what configure writes") {
  const std::string dir = std::string(GCR_TEST_SOURCE_DIR) + "/etc/engines/";
  auto docker = options("docker");
  docker.set_as_default = true;
  const auto written = must(gcr::plan_docker(docker, ExistingFile{"/e/daemon.json", std::nullopt}));
  Json example = Json::parse(gcr::test::read_file(dir + "docker-daemon.json"));
  example["runtimes"]["nvidia"].erase("runtimeArgs");
  CHECK(example == Json::parse(*written[0].content));

  auto crio = options("crio");
  crio.set_as_default = true;
  const auto crio_written =
      toml_of(must(gcr::plan_crio(crio, ExistingFile{"/x", std::nullopt}))[0]);
  CHECK(toml::parse_file(dir + "crio-99-gpu-container-runtime.conf") == crio_written);

  auto containerd = options("containerd");
  containerd.set_as_default = true;
  const auto changes = must(
      gcr::plan_containerd(containerd, ExistingFile{"/e/config.toml", "version = 2\n"},
                           ExistingFile{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt}));
  CHECK(toml::parse_file(dir + "containerd-99-gpu-container-runtime.toml") ==
        toml_of(*change_to(changes, "/e/conf.d/99-gpu-container-runtime.toml")));
}

TEST_CASE("containerd: a file whose shape is not containerd's is refused, never overwritten") {
  ConfigureOptions o = options("containerd");
  const auto refusal = [&](const std::string& text) {
    auto r =
        gcr::plan_containerd(o, ExistingFile{"/e/config.toml", text},
                             ExistingFile{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt});
    REQUIRE_FALSE(r.ok());
    return r.error().message;
  };
  CHECK(refusal("version = 2\nimports = \"/etc/x.toml\"\n") ==
        "`imports` must be a list of file names (/e/config.toml)");
  CHECK(refusal("version = \"2\"\n") == "`version` must be 1, 2, 3 or 4 (/e/config.toml)");
  CHECK(refusal("version = 2\nplugins = 5\n") == "`plugins` must be a table (/e/config.toml)");
  CHECK(refusal("version = 2\n[plugins]\n\"io.containerd.grpc.v1.cri\" = 1\n") ==
        "`plugins.io.containerd.grpc.v1.cri` must be a table (/e/config.toml)");
  CHECK(refusal("[plugins.cri.containerd]\nruntimes = []\n") ==
        "`plugins.cri.containerd.runtimes` must be a table (/e/config.toml)");
  // toml++ would read these as 1 and 2.
  CHECK(refusal("version = true\n") == "`version` must be 1, 2, 3 or 4 (/e/config.toml)");
  CHECK(refusal("version = 2.0\n") == "`version` must be 1, 2, 3 or 4 (/e/config.toml)");
}

// Removing from a version 1 file (no `version` key) that has nothing of ours leaves it as it is,
// comments and layout kept: no empty [plugins.cri] table is added.
TEST_CASE("containerd: removing from a version 1 file without our runtime changes nothing") {
  ConfigureOptions o = options("containerd");
  o.remove = true;
  const ExistingFile no_drop{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt};
  for (const std::string text : {"# tuned\noom_score = -999\n", "[plugins.other]\nx = 1\n"}) {
    CAPTURE(text);
    CHECK(must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", text}, no_drop)).empty());
  }
  const auto r = gcr::plan_containerd(o, ExistingFile{"/e/config.toml", "plugins = 5\n"}, no_drop);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "`plugins` must be a table (/e/config.toml)");
  // With ours, it goes and the rest stays.
  ConfigureOptions add = options("containerd");
  const auto added = must(
      gcr::plan_containerd(add, ExistingFile{"/e/config.toml", "oom_score = -999\n"}, no_drop));
  REQUIRE(added.size() == 1);
  const auto removed =
      must(gcr::plan_containerd(o, ExistingFile{"/e/config.toml", *added[0].content}, no_drop));
  REQUIRE(removed.size() == 1);
  CHECK(toml_of(removed[0])["oom_score"].value_or(0) == -999);
  CHECK_FALSE(toml_of(removed[0])["plugins"]["cri"]["containerd"]["runtimes"]["nvidia"]);
}

TEST_CASE("containerd: a key toml++ cannot write back is refused before anything is written") {
  ConfigureOptions o = options("containerd");
  auto r = gcr::plan_containerd(
      o,
      ExistingFile{"/e/config.toml",
                   "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".\"a\\nb\"]\nx = 1\n"},
      ExistingFile{"/e/conf.d/99-gpu-container-runtime.toml", std::nullopt});
  if (r.ok()) {
    for (const auto& change : *r) {
      REQUIRE(change.content);
      CHECK(gcr::parse_toml(*change.content, change.path).ok());
    }
  } else {
    CHECK(r.error().message.find("cannot be written back as TOML") != std::string::npos);
  }
}

TEST_CASE("crio: a runtime path with quotes and newlines is written so it reads back") {
  ConfigureOptions o = options("crio");
  o.runtime_path = "/opt/odd \"name\"\n/gpu-container-runtime";
  auto r = gcr::plan_crio(o, ExistingFile{"/e/99.conf", std::nullopt});
  REQUIRE(r.ok());
  auto back = gcr::parse_toml(*r->at(0).content, "/e/99.conf");
  REQUIRE(back.ok());
  CHECK((*back)["crio"]["runtime"]["runtimes"]["nvidia"]["runtime_path"].value_or(std::string()) ==
        o.runtime_path);
}

TEST_CASE("containerd: a CRI plugin turned off is named (Docker's containerd.io package)") {
  CHECK(gcr::containerd_cri_disabled(ExistingFile{"/e/c.toml", "disabled_plugins = [\"cri\"]\n"}) ==
        "cri");
  CHECK(gcr::containerd_cri_disabled(ExistingFile{
            "/e/c.toml", "version = 2\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n"}) ==
        "io.containerd.grpc.v1.cri");
  CHECK_FALSE(gcr::containerd_cri_disabled(
      ExistingFile{"/e/c.toml", "disabled_plugins = [\"io.containerd.snapshotter.v1.btrfs\"]\n"}));
  CHECK_FALSE(gcr::containerd_cri_disabled(ExistingFile{"/e/c.toml", std::nullopt}));
  // Each version's names: a version 1 file's full name, or a version 2 file's "cri", disables
  // nothing (containerd 1.x matches version 1 entries by ID; version 2 refuses "cri").
  CHECK_FALSE(gcr::containerd_cri_disabled(
      ExistingFile{"/e/c.toml", "disabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n"}));
  CHECK(gcr::containerd_cri_disabled(ExistingFile{
            "/e/c.toml", "version = 3\ndisabled_plugins = [\"io.containerd.cri.v1.runtime\"]\n"}) ==
        "io.containerd.cri.v1.runtime");
}
