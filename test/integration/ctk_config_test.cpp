#include <doctest/doctest.h>

#include "config/config.h"
#include "test_support.h"

using gcr::test::built;
using gcr::test::run;

TEST_CASE("gpu-ctk config default prints the shipped file") {
  const auto result = run({built("gpu-ctk"), "config", "default"});
  CHECK(result.exit_code == 0);
  CHECK(result.out == gcr::test::read_file(std::string(GCR_TEST_SOURCE_DIR) + "/etc/config.toml"));
}

TEST_CASE("gpu-ctk config check validates a file and names the problem") {
  gcr::test::TempDir dir;
  gcr::test::write_file(dir / "ok.toml", "[driver]\nroot = \"/run/nvidia/driver\"\n");
  const auto ok = run({built("gpu-ctk"), "config", "check", dir / "ok.toml"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == dir / "ok.toml" + ": ok\n");
  gcr::test::write_file(dir / "bad.json", R"({"driver": {"root": 1}})");
  const auto bad = run({built("gpu-ctk"), "config", "check", dir / "bad.json"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err == "gpu-ctk: config: `driver.root` must be a string (" + dir / "bad.json" + ")\n");
  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = dir / "bad.json";
  CHECK(run({built("gpu-ctk"), "config", "check"}, env).exit_code == 1);
}

TEST_CASE("gpu-ctk usage errors exit 2") {
  CHECK(run({built("gpu-ctk")}).exit_code == 2);
  CHECK(run({built("gpu-ctk"), "frobnicate"}).exit_code == 2);
  CHECK(run({built("gpu-ctk"), "config", "nope"}).exit_code == 2);
  CHECK(run({built("gpu-ctk"), "--help"}).exit_code == 0);
}

TEST_CASE("every gpu-ctk command prints its usage on stdout with --help and exits 0") {
  const std::vector<std::vector<std::string>> commands = {{"--help"},
                                                          {"config", "--help"},
                                                          {"config", "default", "--help"},
                                                          {"config", "check", "-h"},
                                                          {"info", "--help"},
                                                          {"runtime", "configure", "--help"},
                                                          {"cdi", "generate", "--help"},
                                                          {"cdi", "list", "--help"},
                                                          {"cdi", "validate", "--help"},
                                                          {"cdi", "resolve", "--help"},
                                                          {"hook", "update-ldcache", "--help"},
                                                          {"hook", "create-symlinks", "-h"}};
  gcr::test::RunOptions no_state;
  no_state.stdin_path = "/dev/zero";
  for (const auto& command : commands) {
    std::vector<std::string> argv{built("gpu-ctk")};
    argv.insert(argv.end(), command.begin(), command.end());
    CAPTURE(argv);
    const auto r = run(argv, no_state);
    CHECK(r.exit_code == 0);
    CHECK(r.err == "");
    CHECK(r.out.find("usage: gpu-ctk") != std::string::npos);
  }
}
