// gpu-cdi-refresh.service's own command, read from the shipped unit, run against a simulated
// host: it writes /var/run/cdi/nvidia.yaml (here on a tmpfs in a private mount namespace, so
// the real one is not touched), a spec of every GPU that gpu-ctk cdi list reads back. Needs root.
#include <doctest/doctest.h>

#include "gpu_fixture.h"

namespace {

// The words of the unit's ExecStart= line.
std::vector<std::string> exec_start(const std::string& unit) {
  const std::string text = gcr::test::read_file(unit);
  const auto at = text.find("\nExecStart=");
  REQUIRE(at != std::string::npos);
  const auto start = at + 11;
  const std::string line = text.substr(start, text.find('\n', start) - start);
  std::vector<std::string> words;
  for (std::size_t i = 0; i < line.size();) {
    const auto end = std::min(line.find(' ', i), line.size());
    if (end > i) words.push_back(line.substr(i, end - i));
    i = end + 1;
  }
  return words;
}

}  // namespace

TEST_CASE("gpu-cdi-refresh.service's command writes /var/run/cdi/nvidia.yaml for the host") {
  REQUIRE(gcr::test::is_root());
  gcr::test::GpuFixture f;
  auto argv = exec_start(GCR_TEST_SOURCE_DIR "/etc/systemd/gpu-cdi-refresh.service");
  REQUIRE(argv == std::vector<std::string>{"/usr/bin/gpu-ctk", "cdi", "generate", "--output",
                                           "/var/run/cdi/nvidia.yaml"});
  argv.front() = gcr::test::built("gpu-ctk");
  // A private /var/run: the command runs as the unit's, then the spec is copied out.
  const std::string copy = f.path("refreshed/nvidia.yaml");
  gcr::test::make_dirs(f.path("refreshed"));
  std::vector<std::string> shell{
      "/usr/bin/unshare",
      "--mount",
      "--propagation",
      "private",
      "/bin/sh",
      "-ec",
      "mount -t tmpfs tmpfs /var/run; \"$@\"; cp /var/run/cdi/nvidia.yaml " + copy,
      "sh"};
  shell.insert(shell.end(), argv.begin(), argv.end());
  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
  const auto r = gcr::test::run(shell, env);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("gpu-ctk cdi: wrote /var/run/cdi/nvidia.yaml (") == 0);

  const auto listed = gcr::test::run(
      {gcr::test::built("gpu-ctk"), "cdi", "list", "--spec-dir", f.path("refreshed")}, env);
  REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  for (const auto& gpu : f.host().gpus()) {
    CHECK(listed.out.find("nvidia.com/gpu=" + std::to_string(gpu.index) + "\n") !=
          std::string::npos);
    CHECK(listed.out.find("nvidia.com/gpu=" + gpu.uuid + "\n") != std::string::npos);
  }
  CHECK(listed.out.find("nvidia.com/gpu=all\n") != std::string::npos);
}
