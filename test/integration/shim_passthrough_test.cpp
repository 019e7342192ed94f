// The shim in front of a recording fake runc: argv, environment and fds pass through
// unchanged; create/run without a GPU request leave the bundle untouched; failures are one
// line on stderr and in runc's --log, with runc not run.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>

#include "shim_fixture.h"

using gcr::Json;
using gcr::test::ShimFixture;

namespace {

std::vector<std::string> recorded_args(const Json& record) {
  auto argv = record.at("argv").get<std::vector<std::string>>();
  return std::vector<std::string>(argv.begin() + 1, argv.end());
}

struct timespec mtime_of(const std::string& path) {
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  return st.st_mtim;
}

const std::string kPlainSpec =
    R"({"ociVersion":"1.0.2","process":{"env":["PATH=/bin"],"args":["sh"]},"root":{"path":"rootfs"}})";
const std::string kGpuSpec =
    R"({"ociVersion":"1.0.2","process":{"env":["NVIDIA_VISIBLE_DEVICES=0"],"args":["sh"]},"root":{"path":"rootfs"}})";

}  // namespace

TEST_CASE("every command reaches runc with argv[1..] byte-identical") {
  ShimFixture f;
  f.write_spec(kPlainSpec);
  const std::vector<std::vector<std::string>> calls = {
      {"--root", "/run/x", "--log", f.path("log.json"), "--log-format", "json", "create",
       "--bundle", f.bundle(), "--pid-file", "/run/p", "c1"},
      {"--root", "/run/x", "start", "c1"},
      {"--root", "/run/x", "state", "c1"},
      {"--root", "/run/x", "kill", "c1", "KILL"},
      {"--root", "/run/x", "delete", "--force", "c1"},
      {"exec", "--process", "/p.json", "c1"},
      {"ps", "c1"},
      {"events", "c1"},
      {"pause", "c1"},
      {"resume", "c1"},
      {"update", "c1"},
      {"features"},
      {"checkpoint", "c1"},
      {"restore", "c1"},
      {"spec"},
      {"list"},
      {"not-a-runc-command", "--weird", "x y", ""},
      {"run", "-b", f.bundle(), "c2"},
      {"state", "create"},
  };
  for (const auto& args : calls) {
    CAPTURE(args);
    const auto result = f.shim(args);
    CHECK(result.exit_code == 0);
    const Json record = f.record();
    REQUIRE_FALSE(record.is_null());
    CHECK(recorded_args(record) == args);
    CHECK(record.at("argv").at(0) == gcr::test::built("fake-runc"));
  }
}

TEST_CASE("runc's exit status is the caller's") {
  ShimFixture f;
  gcr::test::RunOptions options;
  options.env["FAKE_RUNC_EXIT"] = "42";
  CHECK(f.shim({"state", "c1"}, options).exit_code == 42);
}

TEST_CASE("runc gets the shim's environment unchanged") {
  ShimFixture f;
  // The shim gets exactly these entries (env -i), so all that runc gets is known.
  const std::vector<std::string> env{"SOME_CALLER_VAR=value with spaces",
                                     "LD_LIBRARY_PATH=/caller/lib",
                                     "EMPTY=",
                                     "WITH_EQUALS=a=b",
                                     "GPU_CONTAINER_RUNTIME_CONFIG=" + f.config_path(),
                                     "FAKE_RUNC_RECORD=" + f.path("record.json")};
  std::vector<std::string> argv{"/usr/bin/env", "-i"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.insert(argv.end(), {gcr::test::built("gpu-container-runtime"), "state", "c1"});
  REQUIRE(gcr::test::run(argv).exit_code == 0);
  // The same entries in the same order, plus the one marker that stops a runtime loop.
  auto expected = env;
  expected.push_back("GPU_CONTAINER_RUNTIME_HANDED_TO=" + gcr::test::built("fake-runc"));
  CHECK(f.record().at("env") == Json(expected));
}

TEST_CASE("only fds 0-2 and the handed ones survive the exec") {
  ShimFixture f;
  f.write_spec(kPlainSpec);
  const std::string shim = gcr::test::built("gpu-container-runtime");
  const auto fds_with = [&](const std::string& runc_args, const std::string& extra_env) {
    const std::string script = "exec 3</dev/null 4</dev/null 5</dev/null 6</dev/null; " +
                               extra_env + " exec " + shim + " " + runc_args;
    gcr::test::RunOptions options;
    options.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
    options.env["FAKE_RUNC_RECORD"] = f.path("record.json");
    REQUIRE(gcr::test::run({"/bin/sh", "-c", script}, options).exit_code == 0);
    return f.record().at("fds").get<std::vector<int>>();
  };
  CHECK(fds_with("state c1", "") == std::vector<int>{0, 1, 2});
  CHECK(fds_with("create --preserve-fds 2 --bundle " + f.bundle() + " c1", "") ==
        std::vector<int>{0, 1, 2, 3, 4});
  CHECK(fds_with("exec --preserve-fds 1 c1 sh", "LISTEN_FDS=2 LISTEN_PID=$$") ==
        std::vector<int>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("create and run without a GPU request leave config.json byte-identical") {
  ShimFixture f;
  f.write_spec(kPlainSpec);
  const auto before = mtime_of(f.spec_path());
  for (const std::string command : {"create", "run"}) {
    REQUIRE(f.shim({command, "--bundle", f.bundle(), "c1"}).exit_code == 0);
    CHECK(f.record().at("spec") == kPlainSpec);
    const auto after = mtime_of(f.spec_path());
    CHECK(after.tv_sec == before.tv_sec);
    CHECK(after.tv_nsec == before.tv_nsec);
  }
}

TEST_CASE("the working directory is the bundle when no --bundle is given") {
  ShimFixture f;
  f.write_spec("not json");
  gcr::test::RunOptions in_bundle;
  in_bundle.cwd = f.bundle();
  const auto result = f.shim({"create", "c1"}, in_bundle);
  CHECK(result.exit_code == 1);
  CHECK(result.err.find("(./config.json)") != std::string::npos);
}

TEST_CASE("a bad config.json fails create: one line, file untouched, runc not run") {
  ShimFixture f;
  const std::string cases[] = {"",
                               "null",
                               "[]",
                               R"({"process":{},"process":{}})",
                               R"({} junk)",
                               "\xEF\xBB\xBF{}",
                               "{\"a\":\"\xff\"}"};
  for (const auto& text : cases) {
    CAPTURE(text);
    f.write_spec(text);
    const auto result = f.shim({"--log", f.path("log.json"), "--log-format", "json", "create",
                                "--bundle", f.bundle(), "c1"});
    CHECK(result.exit_code == 1);
    CHECK(f.record().is_null());
    CHECK(gcr::test::read_file(f.spec_path()) == text);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    CHECK(result.err.rfind("gpu-container-runtime: cannot read the container spec: ", 0) == 0);
  }
}

TEST_CASE("errors reach runc's --log in runc's format") {
  ShimFixture f;
  f.write_spec("[]");
  const std::string log = f.path("log.json");
  REQUIRE(f.shim({"--log", log, "--log-format", "json", "create", "--bundle", f.bundle(), "c1"})
              .exit_code == 1);
  const Json entry = Json::parse(gcr::test::read_file(log));
  CHECK(entry.at("level") == "error");
  CHECK(entry.at("msg").get<std::string>().find("the top level is not a JSON object") !=
        std::string::npos);
  CHECK(entry.at("time").is_string());

  const std::string text_log = f.path("log.txt");
  REQUIRE(f.shim({"--log", text_log, "create", "--bundle", f.bundle(), "c1"}).exit_code == 1);
  const std::string line = gcr::test::read_file(text_log);
  CHECK(line.rfind("time=\"", 0) == 0);
  CHECK(line.find(" level=error msg=\"cannot read the container spec: ") != std::string::npos);
}

TEST_CASE("no low-level runtime: one line naming every candidate") {
  ShimFixture f;
  f.write_config({{"runtime", {{"runtimes", {"/nonexistent/runc", "no-such-runtime-name"}}}}});
  const auto result = f.shim({"state", "c1"});
  CHECK(result.exit_code == 1);
  CHECK(result.err ==
        "gpu-container-runtime: no low-level runtime found: tried /nonexistent/runc (not an "
        "executable "
        "file), no-such-runtime-name (not in PATH)\n");
}

TEST_CASE("a runtime candidate that is the shim itself is skipped") {
  ShimFixture f;
  gcr::test::make_symlink(gcr::test::built("gpu-container-runtime"), f.path("bin/runc"));
  f.write_config(
      {{"runtime",
        {{"runtimes",
          {f.path("bin/runc"), "gpu-container-runtime", gcr::test::built("fake-runc")}}}}});
  gcr::test::RunOptions options;
  options.env["PATH"] = f.path("bin") + ":" +
                        gcr::test::built("gpu-container-runtime")
                            .substr(0, gcr::test::built("gpu-container-runtime").rfind('/'));
  const auto result = f.shim({"state", "c1"}, options);
  CHECK(result.exit_code == 0);
  CHECK_FALSE(f.record().is_null());
}

TEST_CASE("a runtime that calls the shim again is a loop, stopped with one line") {
  ShimFixture f;
  gcr::test::write_file(
      f.path("bin/wrapper"),
      "#!/bin/sh\nexec " + gcr::test::built("gpu-container-runtime") + " \"$@\"\n", 0755);
  f.write_config({{"runtime", {{"runtimes", {f.path("bin/wrapper")}}}}});
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"state", "c1"}, std::vector<std::string>{"delete", "c1"}}) {
    const auto result = f.shim(args);
    CHECK(result.exit_code == 1);
    CHECK(result.err == "gpu-container-runtime: runtime loop: " + f.path("bin/wrapper") +
                            " started gpu-container-runtime again; [runtime] runtimes must name "
                            "the real low-level runtime (runc, crun), not a program that calls "
                            "this shim\n");
  }
}

TEST_CASE("configuration errors name the key and the file; --gpu-config is ours alone") {
  ShimFixture f;
  f.write_spec(kGpuSpec);
  gcr::test::write_file(f.path("bad.toml"), "[runtime]\nlog-levels = \"debug\"\n");
  const auto bad =
      f.shim({"--gpu-config", f.path("bad.toml"), "create", "--bundle", f.bundle(), "c1"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == "gpu-container-runtime: config: unknown key `runtime.log-levels` (" +
                       f.path("bad.toml") + ")\n");
  CHECK(f.record().is_null());

  // Other commands still reach a runtime (the built-in list finds the real runc), so a typo
  // cannot stop `delete` or `kill`; the problem is logged.
  const auto state =
      f.shim({"--gpu-config", f.path("bad.toml"), "--log", f.path("log.json"), "--log-format",
              "json", "--root", f.path("runc-root"), "state", "no-such-container"});
  CHECK(state.err.find("container does not exist") != std::string::npos);
  CHECK(state.err.find("config:") == std::string::npos);
  CHECK(gcr::test::read_file(f.path("log.json")).find("unknown key `runtime.log-levels`") !=
        std::string::npos);

  gcr::test::write_file(f.path("good.toml"),
                        "[runtime]\nruntimes = [\"" + gcr::test::built("fake-runc") + "\"]\n");
  gcr::test::RunOptions no_env;
  no_env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.path("bad.toml");
  const auto good =
      f.shim({"--gpu-config=" + f.path("good.toml"), "--root", "/r", "state", "c1"}, no_env);
  CHECK(good.exit_code == 0);
  CHECK(recorded_args(f.record()) == std::vector<std::string>{"--root", "/r", "state", "c1"});
}

TEST_CASE("a pass-through call reads [runtime] alone: a typo elsewhere stops a GPU create only") {
  ShimFixture f;
  f.write_spec(kGpuSpec);
  gcr::test::write_file(f.path("typo.toml"), "[runtime]\nruntimes = [\"" +
                                                 gcr::test::built("fake-runc") +
                                                 "\"]\n\n[driver]\nrooot = \"/x\"\n");
  const auto create =
      f.shim({"--gpu-config", f.path("typo.toml"), "create", "--bundle", f.bundle(), "c1"});
  CHECK(create.exit_code == 1);
  CHECK(create.err == "gpu-container-runtime: config: unknown key `driver.rooot` (" +
                          f.path("typo.toml") + ")\n");
  CHECK(f.record().is_null());
  // `state` goes to the runtime the file names, with nothing to warn of in what it read.
  const auto state = f.shim({"--gpu-config", f.path("typo.toml"), "--log", f.path("log.json"),
                             "--log-format", "json", "--root", "/r", "state", "c1"});
  CHECK(state.exit_code == 0);
  CHECK(recorded_args(f.record()) == std::vector<std::string>{"--log", f.path("log.json"),
                                                              "--log-format", "json", "--root",
                                                              "/r", "state", "c1"});
  // Nothing logged (a warning would be: the file's runtime, or the built-in defaults, used).
  CHECK_FALSE(std::filesystem::exists(f.path("log.json")));
}

// The shim may be every pod's runtime: a typo in its file stops GPU containers, which it cannot
// serve as asked, and no other; and `kill`, `delete` still reach the runtime the file names
// (the built-in list would find runc, which does not know crun's containers).
TEST_CASE("a configuration that fails as a whole stops a GPU create only; runtimes still count") {
  ShimFixture f;
  gcr::test::write_file(f.path("broken.toml"), "[runtime]\nruntimes = [\"" +
                                                   gcr::test::built("fake-runc") +
                                                   "\"]\nlog-levels = \"debug\"\n");
  f.write_spec(kPlainSpec);
  const auto plain = f.shim({"--gpu-config", f.path("broken.toml"), "--log", f.path("log.json"),
                             "create", "--bundle", f.bundle(), "c1"});
  CHECK(plain.exit_code == 0);
  CHECK(gcr::test::read_file(f.spec_path()) == kPlainSpec);
  CHECK(recorded_args(f.record()) == std::vector<std::string>{"--log", f.path("log.json"), "create",
                                                              "--bundle", f.bundle(), "c1"});
  CHECK(gcr::test::read_file(f.path("log.json")).find("unknown key `runtime.log-levels`") !=
        std::string::npos);
  const auto kill = f.shim({"--gpu-config", f.path("broken.toml"), "kill", "c1", "9"});
  CHECK(kill.exit_code == 0);
  CHECK(recorded_args(f.record()) == std::vector<std::string>{"kill", "c1", "9"});
  // A TOML mistake outside [runtime] keeps its list too; one that leaves no valid list stops
  // the create (the built-in runc is not the runtime the file meant, crun or a sandbox).
  gcr::test::write_file(
      f.path("syntax.toml"),
      "[runtime]\nruntimes = [\"" + gcr::test::built("fake-runc") + "\"]\n[driver]\nroot = \n");
  CHECK(f.shim({"--gpu-config", f.path("syntax.toml"), "create", "--bundle", f.bundle(), "c3"})
            .exit_code == 0);
  CHECK(recorded_args(f.record()) ==
        std::vector<std::string>{"create", "--bundle", f.bundle(), "c3"});
  gcr::test::write_file(f.path("lost.toml"), "[runtime]\nruntimes = [\n");
  const auto lost =
      f.shim({"--gpu-config", f.path("lost.toml"), "create", "--bundle", f.bundle(), "c4"});
  CHECK(lost.exit_code == 1);
  CHECK(lost.err.find("lost.toml") != std::string::npos);
  // A request in any form a configuration could name: an annotation's CDI name, a Docker Swarm
  // resource variable too.
  const std::string head =
      R"({"ociVersion":"1.0.2","process":{"args":["sh"]},"root":{"path":"rootfs"},)";
  for (const std::string& spec :
       {kGpuSpec, head + R"("annotations":{"example.com/gpus":"nvidia.com/gpu=0"}})",
        std::string(R"({"ociVersion":"1.0.2","process":{"args":["sh"],)") +
            R"("env":["DOCKER_RESOURCE_GPU=0"]},"root":{"path":"rootfs"}})"}) {
    CAPTURE(spec);
    f.write_spec(spec);
    const auto gpu =
        f.shim({"--gpu-config", f.path("broken.toml"), "create", "--bundle", f.bundle(), "c2"});
    CHECK(gpu.exit_code == 1);
    CHECK(gpu.err.find("unknown key `runtime.log-levels`") != std::string::npos);
    CHECK(gcr::test::read_file(f.spec_path()) == spec);
  }
}

TEST_CASE("--version prints ours, then runc's") {
  ShimFixture f;
  const auto result = f.shim({"--version"});
  CHECK(result.exit_code == 0);
  CHECK(result.out.rfind("gpu-container-runtime version ", 0) == 0);
  CHECK(recorded_args(f.record()) == std::vector<std::string>{"--version"});
}

TEST_CASE("[runtime] log-file and --debug record the decision") {
  ShimFixture f;
  f.write_spec(kPlainSpec);
  f.write_config({{"runtime", {{"log-file", f.path("shim.log")}, {"log-level", "error"}}}});
  REQUIRE(f.shim({"create", "--bundle", f.bundle(), "c1"}).exit_code == 0);
  CHECK_FALSE(gcr::test::exists(f.path("shim.log")));
  REQUIRE(f.shim({"--debug", "create", "--bundle", f.bundle(), "c1"}).exit_code == 0);
  const Json entry = Json::parse(gcr::test::read_file(f.path("shim.log")));
  CHECK(entry.at("level") == "debug");
  CHECK(entry.at("msg").get<std::string>().find("no GPU requested") != std::string::npos);
}

TEST_CASE("a spec no string of which could ask for a GPU is passed on unread; others are read") {
  ShimFixture f;
  f.write_config({{"runtime", {{"log-file", f.path("shim.log")}, {"log-level", "debug"}}}});
  // process.env of the wrong type: a spec we would read differently from runc.
  const auto log_of = [&](const std::string& env) {
    std::remove(f.path("shim.log").c_str());
    f.write_spec(R"({"ociVersion":"1.0.2","process":{"env":)" + env +
                 R"(},"root":{"path":"rootfs"}})");
    REQUIRE(f.shim({"create", "--bundle", f.bundle(), "c1"}).exit_code == 0);
    return gcr::test::read_file(f.path("shim.log"));
  };
  const std::string unread = log_of(R"("PATH=/bin")");
  CHECK(unread.find("no GPU requested") != std::string::npos);
  CHECK(unread.find("\"warning\"") == std::string::npos);
  const std::string read = log_of(R"("NVIDIA_VISIBLE_DEVICES=0")");
  CHECK(read.find("\"warning\"") != std::string::npos);
  CHECK(read.find("spec left untouched") != std::string::npos);
}
