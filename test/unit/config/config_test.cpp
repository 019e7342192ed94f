#include <doctest/doctest.h>

#include "config/config_edit.h"
#include "config/config_file.h"
#include "test_support.h"
#include "toml/toml.h"

using gcr::test::TempDir;
using gcr::test::write_file;

namespace {

std::string load_error(const std::string& path) {
  auto c = gcr::load_config_file(path);
  REQUIRE_FALSE(c.ok());
  return c.error().message;
}

// Each (file text, part of the error) pair: the file is refused with that error.
void expect_refusals(const TempDir& dir,
                     const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& entry : cases) {
    const auto& text = entry.first;  // named: doctest's CAPTURE cannot take a binding
    const auto& expected = entry.second;
    CAPTURE(text);
    write_file(dir / "x.toml", text);
    CHECK(load_error(dir / "x.toml").find(expected) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("the shipped config.toml is exactly the built-in defaults") {
  TempDir dir;
  write_file(dir / "config.toml", gcr::default_config_toml());
  auto loaded = gcr::load_config_file(dir / "config.toml");
  REQUIRE(loaded.ok());
  const gcr::Config defaults;
  CHECK(loaded->runtime.runtimes == defaults.runtime.runtimes);
  CHECK(loaded->runtime.log_level == defaults.runtime.log_level);
  CHECK(loaded->driver.root == defaults.driver.root);
  CHECK(loaded->driver.dev_root == defaults.driver.dev_root);
  CHECK(loaded->requests.accept_env_when_unprivileged ==
        defaults.requests.accept_env_when_unprivileged);
  CHECK(loaded->requests.accept_volume_mounts == defaults.requests.accept_volume_mounts);
  CHECK(loaded->requests.annotation_prefixes == defaults.requests.annotation_prefixes);
  CHECK(loaded->requests.supported_capabilities == defaults.requests.supported_capabilities);
  CHECK(loaded->requests.mode == defaults.requests.mode);
  CHECK(loaded->requests.cuda_compat_dir == defaults.requests.cuda_compat_dir);
  CHECK(defaults.requests.cuda_compat_dir == "/usr/local/cuda/compat");
  CHECK(loaded->cdi.spec_dirs == defaults.cdi.spec_dirs);
  CHECK(loaded->cdi.default_kind == defaults.cdi.default_kind);
  CHECK(loaded->hooks.ctk_path == defaults.hooks.ctk_path);
  CHECK(loaded->hooks.ldconfig == defaults.hooks.ldconfig);
  const auto& plugin = loaded->device_plugin;
  CHECK(plugin.kubelet_dir == defaults.device_plugin.kubelet_dir);
  CHECK(plugin.resource_name == defaults.device_plugin.resource_name);
  CHECK(plugin.device_ids == defaults.device_plugin.device_ids);
  CHECK(plugin.device_list == defaults.device_plugin.device_list);
  CHECK(plugin.replicas == defaults.device_plugin.replicas);
  CHECK(plugin.replicas_on_distinct_gpus == defaults.device_plugin.replicas_on_distinct_gpus);
  CHECK(plugin.labels_file == defaults.device_plugin.labels_file);
  CHECK(plugin.mig_strategy == defaults.device_plugin.mig_strategy);
  CHECK(plugin.allocation == defaults.device_plugin.allocation);
  CHECK(plugin.health == defaults.device_plugin.health);
  CHECK(plugin.ignored_xids == defaults.device_plugin.ignored_xids);
}

TEST_CASE("[device-plugin] keys are validated like every other key") {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[device-plugin]\nresource-name = \"gpu\"\n", "must be an extended resource name"},
      {"[device-plugin]\nresource-name = \"kubernetes.io/gpu\"\n",
       "must be an extended resource name"},
      {"[device-plugin]\nresource-name = \"Nvidia.com/gpu\"\n",
       "must be an extended resource name"},
      {"[device-plugin]\ndevice-ids = \"serial\"\n",
       "`device-plugin.device-ids` must be one of uuid, index"},
      {"[device-plugin]\ndevice-list = []\n", "must name at least one strategy"},
      {"[device-plugin]\ndevice-list = [\"envvar\", \"envvar\"]\n", "names `envvar` twice"},
      {"[device-plugin]\ndevice-list = [\"mounts\"]\n",
       "`mounts` must be one of envvar, volume-mounts"},
      {"[device-plugin]\nreplicas = 0\n", "`device-plugin.replicas` must be from 1 to 1024"},
      {"[device-plugin]\nreplicas = \"2\"\n", "`device-plugin.replicas` must be an integer"},
      {"[device-plugin]\nmig-strategy = \"all\"\n", "must be one of none, single, mixed"},
      {"[device-plugin]\nallocation = \"best\"\n", "must be one of topology, packed, distributed"},
      {"[device-plugin]\nkubelet-dir = \"kubelet\"\n", "must be an absolute path"},
      {"[device-plugin]\nlabels-file = \"features.d/gpu\"\n",
       "`device-plugin.labels-file` must be an absolute path"},
      {"[device-plugin]\nlabels-file = \"/etc/kubernetes/features.d/\"\n",
       "`device-plugin.labels-file` must name a file, not a directory"},
      {"[device-plugin]\nsocket = \"x\"\n", "unknown key `device-plugin.socket`"},
      {"[device-plugin]\nsharing = \"slices\"\n",
       "`device-plugin.sharing` must be one of none, time-slicing, mps"},
      {"[device-plugin]\nsharing = \"mps\"\n",
       "`device-plugin.sharing` mps needs `device-plugin.replicas` (and each of "
       "`device-plugin.replicas-by-gpu`) from 2 to 48"},
      {"[device-plugin]\nsharing = \"mps\"\nreplicas = 4\nreplicas-by-gpu = {\"0\" = 1}\n",
       "from 2 to 48 (the shares of each GPU; each container size has a control daemon)"},
      {"[device-plugin]\nsharing = \"mps\"\nreplicas = 49\n", "from 2 to 48"},
      {"[device-plugin]\nreplicas-by-gpu = {\"Tesla T4\" = 0}\n",
       "`device-plugin.replicas-by-gpu` `Tesla T4` must be from 1 to 1024"},
      {"[device-plugin]\nreplicas-by-gpu = [2]\n",
       "`device-plugin.replicas-by-gpu` must be a table of integers"},
      {"[device-plugin]\nsharing = \"mps\"\nreplicas = 4\nmig-strategy = \"single\"\n",
       "`device-plugin.sharing` mps is not supported on MIG devices"},
      {"[device-plugin]\nmps-root = \"mps\"\n",
       "`device-plugin.mps-root` must be an absolute path"},
      {"[device-plugin]\nimex-channel = \"yes\"\n",
       "`device-plugin.imex-channel` must be one of disabled, auto, enabled"},
  };
  expect_refusals(dir, cases);
  write_file(dir / "ok.toml",
             "[device-plugin]\nresource-name = \"example.com/mig-1g.5gb\"\nreplicas = 4\n"
             "device-list = [\"volume-mounts\", \"cdi-annotations\"]\nlabels-file = \"\"\n");
  auto ok = gcr::load_config_file(dir / "ok.toml");
  REQUIRE(ok.ok());
  CHECK(ok->device_plugin.replicas == 4);
  CHECK(ok->device_plugin.resource_name == "example.com/mig-1g.5gb");
  CHECK(ok->device_plugin.labels_file.empty());
  CHECK_FALSE(ok->mps());
  write_file(dir / "mps.toml",
             "[device-plugin]\nsharing = \"mps\"\nreplicas = 8\n"
             "[device-plugin.replicas-by-gpu]\n\"Tesla T4\" = 2\n\"3\" = 4\n");
  auto mps = gcr::load_config_file(dir / "mps.toml");
  REQUIRE(mps.ok());
  CHECK(mps->mps());
  CHECK(mps->device_plugin.mps_root == "/run/gpu-container-runtime/mps");
  CHECK(mps->device_plugin.replicas_by_gpu ==
        std::map<std::string, std::int64_t>{{"3", 4}, {"Tesla T4", 2}});
}

TEST_CASE("TOML and JSON files carry the same keys") {
  TempDir dir;
  write_file(dir / "c.toml",
             "[runtime]\nruntimes = [\"/opt/runc\"]\nlog-level = \"debug\"\n[driver]\nroot = "
             "\"/run/nvidia/driver\"\n");
  write_file(
      dir / "c.json",
      R"({"runtime": {"runtimes": ["/opt/runc"], "log-level": "debug"}, "driver": {"root": "/run/nvidia/driver"}})");
  for (const char* name : {"c.toml", "c.json"}) {
    auto c = gcr::load_config_file(dir / name);
    REQUIRE(c.ok());
    CHECK(c->runtime.runtimes == std::vector<std::string>{"/opt/runc"});
    CHECK(c->runtime.log_level == gcr::LogLevel::kDebug);
    CHECK(c->driver.root == "/run/nvidia/driver");
    CHECK(c->driver.dev_root == "/");
    CHECK(c->source == dir / name);
  }
}

TEST_CASE("unknown keys and tables are errors naming the key and the file") {
  TempDir dir;
  write_file(dir / "a.toml", "[runtime]\nruntimez = [\"runc\"]\n");
  CHECK(load_error(dir / "a.toml") ==
        "config: unknown key `runtime.runtimez` (" + dir / "a.toml" + ")");
  write_file(dir / "b.toml", "[nvidia-container-runtime]\ndebug = \"/x\"\n");
  CHECK(load_error(dir / "b.toml").find("unknown table `nvidia-container-runtime`") !=
        std::string::npos);
  write_file(dir / "c.json", R"({"hooks": {"ldconfig": "@/sbin/ldconfig", "extra": 1}})");
  CHECK(load_error(dir / "c.json").find("unknown key `hooks.extra`") != std::string::npos);
}

TEST_CASE("wrong types are errors naming the key") {
  TempDir dir;
  write_file(dir / "a.toml", "[runtime]\nruntimes = \"runc\"\n");
  CHECK(load_error(dir / "a.toml").find("`runtime.runtimes` must be a list of strings") !=
        std::string::npos);
  write_file(dir / "b.toml", "[requests]\naccept-volume-mounts = \"yes\"\n");
  CHECK(load_error(dir / "b.toml").find("`requests.accept-volume-mounts` must be true or false") !=
        std::string::npos);
  write_file(dir / "c.toml", "runtime = 3\n");
  CHECK(load_error(dir / "c.toml").find("`runtime` must be a table") != std::string::npos);
  write_file(dir / "d.toml", "[runtime]\nruntimes = [\"runc\", 7]\n");
  CHECK(load_error(dir / "d.toml").find("`runtime.runtimes` must be a list of strings") !=
        std::string::npos);
}

TEST_CASE("invalid values are refused") {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[runtime]\nlog-level = \"trace\"\n", "`runtime.log-level` must be one of"},
      {"[runtime]\nruntimes = []\n", "`runtime.runtimes` must name at least one runtime"},
      {"[driver]\nroot = \"relative\"\n", "`driver.root` must be an absolute path"},
      {"[hooks]\nldconfig = \"/sbin/ldconfig\"\n", "`hooks.ldconfig` must be '@' followed by"},
      {"[hooks]\nldconfig = \"@sbin/ldconfig\"\n", "`hooks.ldconfig` must be '@' followed by"},
      {"[requests]\nsupported-capabilities = [\"compute\", \"gpu\"]\n",
       "`gpu` is not a driver capability"},
      {"[cdi]\ndefault-kind = \"gpu\"\n", "`cdi.default-kind` must be a CDI kind"},
      {"[requests]\nmode = \"legacy\"\n", "`requests.mode` must be auto or cdi"},
      {"[requests]\ncuda-compat-dir = \"usr/local/cuda/compat\"\n",
       "`requests.cuda-compat-dir` must be an absolute path"},
      {"[requests]\ncuda-compat-dir = \"/usr/local/cuda/../../etc\"\n",
       "`requests.cuda-compat-dir` must not have `.` or `..` parts"},
      {"[requests]\ncuda-compat-dir = 1\n", "`requests.cuda-compat-dir` must be a string"},
      {"[cdi]\nspec-dirs = [\"/etc/cdi\", \"cdi\"]\n", "`cdi` must be an absolute path"},
      {"[requests]\nswarm-resource = [\"DOCKER RESOURCE\"]\n",
       "`DOCKER RESOURCE` is not an environment variable name"},
      {"[requests]\nswarm-resource = [\"A=B\"]\n", "`A=B` is not an environment variable name"},
      {"[requests]\nswarm-resource = [\"\"]\n", "`` is not an environment variable name"},
      {"[requests]\nswarm-resource = [\"NVIDIA_IMEX_CHANNELS\"]\n",
       "`NVIDIA_IMEX_CHANNELS` is one of the runtime's own variables"},
      {"[requests]\nswarm-resource = [\"GPUS\", \"GPUS\"]\n", "names `GPUS` twice"},
  };
  expect_refusals(dir, cases);
}

TEST_CASE("[requests] cuda-compat-dir: a folder in the image, or \"\" to turn it off") {
  TempDir dir;
  write_file(dir / "off.toml", "[requests]\ncuda-compat-dir = \"\"\n");
  auto off = gcr::load_config_file(dir / "off.toml");
  REQUIRE(off.ok());
  CHECK(off->requests.cuda_compat_dir.empty());
  write_file(dir / "other.json", R"({"requests": {"cuda-compat-dir": "/opt/cuda-12.9/compat"}})");
  auto other = gcr::load_config_file(dir / "other.json");
  REQUIRE(other.ok());
  CHECK(other->requests.cuda_compat_dir == "/opt/cuda-12.9/compat");
}

TEST_CASE("syntax errors name the line; the extension picks the syntax") {
  TempDir dir;
  write_file(dir / "a.toml", "[runtime]\nruntimes = [\"runc\"\n");
  CHECK(load_error(dir / "a.toml").find("invalid TOML at line") != std::string::npos);
  write_file(dir / "b.json", R"({"runtime": {}, "runtime": {}})");
  CHECK(load_error(dir / "b.json").find("duplicate key `runtime`") != std::string::npos);
  write_file(dir / "c.yaml", "runtime: {}\n");
  CHECK(load_error(dir / "c.yaml").find("must end in .toml or .json") != std::string::npos);
}

TEST_CASE("location: explicit path, then config.toml, then config.json, then defaults") {
  TempDir dir;
  auto none = gcr::load_config(std::nullopt, dir.path());
  REQUIRE(none.ok());
  CHECK(none->source.empty());
  write_file(dir / "config.json", R"({"runtime": {"runtimes": ["json"]}})");
  CHECK(gcr::load_config(std::nullopt, dir.path())->runtime.runtimes.front() == "json");
  write_file(dir / "config.toml", "[runtime]\nruntimes = [\"toml\"]\n");
  CHECK(gcr::load_config(std::nullopt, dir.path())->runtime.runtimes.front() == "toml");
  write_file(dir / "other.toml", "[runtime]\nruntimes = [\"explicit\"]\n");
  CHECK(gcr::load_config(dir / "other.toml", dir.path())->runtime.runtimes.front() == "explicit");
  auto missing = gcr::load_config(dir / "missing.toml", dir.path());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find("missing.toml") != std::string::npos);
}

TEST_CASE("a pass-through call reads the [runtime] table alone, where lines tell it apart") {
  const std::string shipped = gcr::default_config_toml();
  const auto table = gcr::runtime_table_text(shipped);
  REQUIRE(table.has_value());
  CHECK(table->starts_with("[runtime]\n"));
  CHECK(table->find("runtimes = ") != std::string::npos);
  CHECK(table->find("[driver]") == std::string::npos);
  CHECK(gcr::runtime_table_text("# nothing but this\n\n[driver]\nroot = \"/x\"\n") == "");
  CHECK(gcr::runtime_table_text("[runtime] # ours\r\nlog-level = \"debug\"\r\n[driver]\n") ==
        "[runtime] # ours\r\nlog-level = \"debug\"\r\n");
  // What lines alone cannot tell apart: the whole file is read.
  for (const std::string text :
       {"log-level = 1\n[runtime]\n", "runtime.log-level = \"debug\"\n", "[runtime]\n[runtime]\n",
        "[runtime]\n[runtime.x]\n", "[\"runtime\"]\nlog-level = \"x\"\n", "[[a]]\n[runtime]\n",
        "[runtime]\nruntimes = [\n[\"a\"],\n]\n", "[driver]\nroot = \"\"\"\n[runtime]\n\"\"\"\n",
        "[driver]\nroot = '''x'''\n", "\xEF\xBB\xBF[runtime]\n"}) {
    CAPTURE(text);
    CHECK_FALSE(gcr::runtime_table_text(text).has_value());
  }
}

TEST_CASE("a file of the usual forms is read without the TOML parser, as the parser reads it") {
  const auto parsed = [](const std::string& text) {
    auto table = gcr::parse_toml(text, "x.toml");
    REQUIRE(table.ok());
    return gcr::toml_to_json(*table);
  };
  // The shipped file, whole and its [runtime] table alone.
  const std::string shipped = gcr::default_config_toml();
  const auto whole = gcr::simple_config_toml(shipped);
  REQUIRE(whole.has_value());
  CHECK(*whole == parsed(shipped));
  CHECK(whole->at("device-plugin").at("replicas") == 1);
  CHECK(whole->at("device-plugin").at("replicas-by-gpu") == gcr::Json::object());
  CHECK(whole->at("requests").at("accept-volume-mounts") == false);
  const auto runtime = gcr::runtime_table_text(shipped);
  REQUIRE(runtime.has_value());
  const auto simple = gcr::simple_config_toml(*runtime);
  REQUIRE(simple.has_value());
  CHECK(*simple == parsed(*runtime));
  CHECK(simple->at("runtime").at("runtimes") == gcr::Json::array({"runc", "crun"}));
  for (const std::string text :
       {"", "# only\n", "[runtime]\n", "[runtime]# c\nruntimes=[\"a\"]\n",
        "  [runtime]  # c\n\n  log-level = \"debug\"   # c\n\truntimes = [ \"/a\" , \"b\", ]#c\n",
        "[runtime]\nstate-dir = \"/x\"\nlog-file = \"\"\nruntimes = []\nlog-level = \"a#b\tc\"\n",
        "[runtime]\nunknown-key = \"x\"\nA_1 = [\"\"]\n", "[runtime]\nlog-file = 1\n",
        "[runtime]\nlog-file = true\n", "[runtime]\nx = {}\n", "[runtime]\nx = { }#c\n",
        "[z]\nb = -0\na = -922337203685477580\n[a]\nt=false\n-x = 0\n1 = 999999999999999999\n"}) {
    CAPTURE(text);
    const auto read = gcr::simple_config_toml(text);
    REQUIRE(read.has_value());
    CHECK(*read == parsed(text));
  }
  // Anything else is the parser's to read (or refuse).
  for (const std::string text : {"[runtime]\nlog-file = \"a\\\\b\"\n",
                                 "[runtime]\nlog-file = 'a'\n",
                                 "[runtime]\nlog-file = \"a\"\nlog-file = \"b\"\n",
                                 "[ runtime ]\n",
                                 "[runtime]\nruntimes = [\n\"a\"]\n",
                                 "[runtime]\r\n",
                                 "[runtime] # \xC3\xA9\n",
                                 "[runtime]\nlog-file = \"a\" x\n",
                                 "[runtime]\na.b = \"x\"\n",
                                 "[runtime]\n\"a\" = \"x\"\n",
                                 "[runtime]\nruntimes = [\"a\" \"b\"]\n",
                                 "[runtime]\nruntimes = [,]\n",
                                 "[runtime]\nlog-file = \"a\n",
                                 "[runtime]\nlog-file = \"\"\"a\"\"\"\n",
                                 "[runtime]\n= \"a\"\n",
                                 "log-file = \"a\"\n",
                                 "[a.b]\n",
                                 "[[a]]\n",
                                 "[a]\n[a]\n",
                                 "[a]\nx = 1.5\n",
                                 "[a]\nx = 1e3\n",
                                 "[a]\nx = 01\n",
                                 "[a]\nx = +1\n",
                                 "[a]\nx = -\n",
                                 "[a]\nx = 1_000\n",
                                 "[a]\nx = [1, 2]\n",
                                 "[a]\nx = { b = 1 }\n",
                                 "[a]\nx = truex\n",
                                 "[a]\nx = 1979-05-27\n",
                                 "[a]\n.x = 1\n",
                                 "[a]\nx = 1234567890123456789\n",
                                 "[a]\nx = inf\n",
                                 "[a]x\n"}) {
    CAPTURE(text);
    CHECK_FALSE(gcr::simple_config_toml(text).has_value());
  }
}

TEST_CASE("[runtime] alone: the file's runtime settings, the same errors in that table") {
  TempDir dir;
  const auto runtime_only = [&](const std::string& name) {
    return gcr::load_config_file(dir / name, gcr::ConfigScope::kRuntimeTable);
  };
  // A typo in another table stops the whole read (create), not a pass-through call's.
  write_file(dir / "typo.toml",
             "[runtime]\nruntimes = [\"/usr/bin/crun\"]\nlog-level = \"debug\"\n"
             "[driver]\nrooot = \"/x\"\n");
  CHECK(load_error(dir / "typo.toml").find("rooot") != std::string::npos);
  auto passed = runtime_only("typo.toml");
  REQUIRE(passed.ok());
  CHECK(passed->runtime.runtimes == std::vector<std::string>{"/usr/bin/crun"});
  CHECK(passed->runtime.log_level == gcr::LogLevel::kDebug);
  CHECK(passed->driver.root == "/");
  CHECK(passed->source == dir / "typo.toml");
  // An error in [runtime] itself, or a table lines cannot tell apart, is the whole read's.
  for (const std::string text :
       {"[runtime]\nlog-level = \"loud\"\n", "[runtime]\nruntimes = [\n[\"a\"],\n]\n",
        "runtime.log-level = \"debug\"\n[runtime]\nlog-level = \"info\"\n"}) {
    CAPTURE(text);
    write_file(dir / "x.toml", text);
    const auto whole = gcr::load_config_file(dir / "x.toml");
    const auto partial = runtime_only("x.toml");
    REQUIRE_FALSE(whole.ok());
    REQUIRE_FALSE(partial.ok());
    CHECK(partial.error().message == whole.error().message);
  }
  // The error of [runtime] itself is the one given, whatever else the file gets wrong.
  write_file(dir / "both.toml", "[driver]\nrooot = \"/x\"\n[runtime]\nlog-level = \"loud\"\n");
  const auto both = runtime_only("both.toml");
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().message.find("runtime.log-level") != std::string::npos);
  // A line of an array that looks like a header cuts the table short: the file is read whole.
  write_file(dir / "cut.toml", "[ runtime ]\nruntimes = [\n[1]\n]\n");
  REQUIRE(gcr::runtime_table_text(gcr::test::read_file(dir / "cut.toml")) ==
          "[ runtime ]\nruntimes = [\n");
  const auto cut = runtime_only("cut.toml");
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error().message == load_error(dir / "cut.toml"));
  // JSON is read whole.
  write_file(dir / "c.json", R"({"runtime":{"runtimes":["j"]},"driver":{"rooot":"/"}})");
  CHECK_FALSE(runtime_only("c.json").ok());
}

TEST_CASE("NVIDIA's mode-named runtime programs choose [requests] mode") {
  CHECK(gcr::requests_mode_of_program("/usr/bin/nvidia-container-runtime.cdi") == "cdi");
  CHECK(gcr::requests_mode_of_program("nvidia-container-runtime.cdi") == "cdi");
  CHECK(gcr::requests_mode_of_program(
            "/usr/local/nvidia/toolkit/nvidia-container-runtime.legacy") == "auto");
  for (const char* other : {"/usr/bin/nvidia-container-runtime", "gpu-container-runtime",
                            "/x/nvidia-container-runtime.cdi/y", "nvidia-container-runtime.CDI",
                            "my-nvidia-container-runtime.cdi", ""}) {
    CAPTURE(other);
    CHECK_FALSE(gcr::requests_mode_of_program(other).has_value());
  }
}

TEST_CASE("keys set in a configuration file's text: lines replaced or added, comments kept") {
  const std::string text =
      "# ours\n[runtime]\n# the list\nruntimes = [\"runc\"]  # a comment\nlog-level = \"info\"\n"
      "\n[requests]   # requests\naccept-volume-mounts = false\n";
  const auto keys = gcr::Json{{"runtime", {{"runtimes", {"crun", "runc"}}}},
                              {"requests", {{"accept-env-when-unprivileged", false}}},
                              {"cdi", {{"default-kind", "example.com/gpu"}}}};
  auto edited = gcr::config_text_with_keys(text, keys, "/e/config.toml");
  REQUIRE_MESSAGE(edited.ok(), edited.error().message);
  CHECK(*edited ==
        "# ours\n[runtime]\n# the list\nruntimes = [\"crun\", \"runc\"]\nlog-level = \"info\"\n\n"
        "[requests]   # requests\naccept-env-when-unprivileged = false\n"
        "accept-volume-mounts = false\n\n[cdi]\ndefault-kind = \"example.com/gpu\"\n");
  CHECK(*gcr::config_text_with_keys("", {{"runtime", {{"log-level", "debug"}}}}, "/e/c.toml") ==
        "[runtime]\nlog-level = \"debug\"\n");
  // A key written across lines: not edited by lines, refused rather than broken.
  const auto across =
      gcr::config_text_with_keys("[runtime]\nruntimes = [\n  \"runc\",\n]\n",
                                 {{"runtime", {{"runtimes", {"crun"}}}}}, "/e/c.toml");
  REQUIRE_FALSE(across.ok());
  CHECK(across.error().message.find("cannot set the keys in place in /e/c.toml") == 0);
  // A table's name holding a plain value: an error naming it (it threw, and gpu-ctk aborted).
  const auto plain = gcr::config_text_with_keys(
      "runtime = 1\n", {{"runtime", {{"log-level", "debug"}}}}, "/e/c.toml");
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.error().message == "cannot set runtime keys in /e/c.toml: `runtime` is not a table");
}
