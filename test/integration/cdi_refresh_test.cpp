// gpu-cdi-refresh.service's own commands, read from the shipped unit, run against a simulated
// host: they write /var/run/cdi/nvidia.yaml, management.nvidia.yaml and nvidia-imex.yaml (here
// on a tmpfs in a private mount namespace, so the real ones are not touched), a spec of every
// GPU, the management spec and the IMEX channels', which gpu-ctk cdi list reads back. Needs root.
#include <doctest/doctest.h>

#include "gpu_fixture.h"

namespace {

// The words of each of the unit's ExecStart= lines.
std::vector<std::vector<std::string>> exec_starts(const std::string& unit) {
  const std::string text = gcr::test::read_file(unit);
  std::vector<std::vector<std::string>> lines;
  for (auto at = text.find("\nExecStart="); at != std::string::npos;
       at = text.find("\nExecStart=", at + 1)) {
    const auto start = at + 11;
    const std::string line = text.substr(start, text.find('\n', start) - start);
    std::vector<std::string> words;
    for (std::size_t i = 0; i < line.size();) {
      const auto end = std::min(line.find(' ', i), line.size());
      if (end > i) words.push_back(line.substr(i, end - i));
      i = end + 1;
    }
    lines.push_back(std::move(words));
  }
  return lines;
}

}  // namespace

TEST_CASE("gpu-cdi-refresh.service's commands write the GPUs', the management and the IMEX spec") {
  REQUIRE(gcr::test::is_root());
  gcr::test::GpuFixture f;
  auto commands = exec_starts(GCR_TEST_SOURCE_DIR "/etc/systemd/gpu-cdi-refresh.service");
  REQUIRE(commands ==
          std::vector<std::vector<std::string>>{
              {"/usr/bin/gpu-ctk", "cdi", "generate", "--mode", "management", "--output",
               "/var/run/cdi/management.nvidia.yaml"},
              {"/usr/bin/gpu-ctk", "cdi", "generate", "--output", "/var/run/cdi/nvidia.yaml"},
              {"-/usr/bin/gpu-ctk", "cdi", "generate", "--mode", "imex", "--output",
               "/var/run/cdi/nvidia-imex.yaml"}});
  // A private /var/run: the commands run as the unit's, one after the other, then the specs are
  // copied out.
  std::string script = "mount -t tmpfs tmpfs /var/run";
  for (auto& argv : commands) {
    const bool may_fail = argv.front().starts_with("-");  // systemd's "-": its failure is no fault
    argv.front() = gcr::test::built("gpu-ctk");
    script += ";";
    for (const auto& word : argv) script += " '" + word + "'";
    if (may_fail) script += " || true";
  }
  const std::string copy = f.path("refreshed");
  gcr::test::make_dirs(copy);
  script +=
      "; cp /var/run/cdi/nvidia.yaml /var/run/cdi/management.nvidia.yaml "
      "/var/run/cdi/nvidia-imex.yaml " +
      copy;
  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
  const auto r = gcr::test::run(
      {"/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-ec", script}, env);
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  CHECK(r.err.find("gpu-ctk cdi: wrote /var/run/cdi/management.nvidia.yaml (1 devices") == 0);
  CHECK(r.err.find("gpu-ctk cdi: wrote /var/run/cdi/nvidia.yaml (") != std::string::npos);

  const auto listed =
      gcr::test::run({gcr::test::built("gpu-ctk"), "cdi", "list", "--spec-dir", copy}, env);
  REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  for (const auto& gpu : f.host().gpus()) {
    CHECK(listed.out.find("nvidia.com/gpu=" + std::to_string(gpu.index) + "\n") !=
          std::string::npos);
    CHECK(listed.out.find("nvidia.com/gpu=" + gpu.uuid + "\n") != std::string::npos);
  }
  CHECK(listed.out.find("\nnvidia.com/gpu=all\n") != std::string::npos);
  CHECK(listed.out.find("management.nvidia.com/gpu=all\n") != std::string::npos);
  CHECK(listed.out.find("\nnvidia.com/imex-channel=0\n") != std::string::npos);
}

// gpu-cdi-refresh.path starts the service for what makes a spec stale or missing: a driver's
// libraries (the loader cache), its modules (depmod's index), and an IMEX channel made after
// boot, whose CDI name the device plugin hands out once the node has it.
TEST_CASE(
    "gpu-cdi-refresh.path watches the loader cache, the modules' index and the IMEX channels") {
  const std::string text =
      gcr::test::read_file(GCR_TEST_SOURCE_DIR "/etc/systemd/gpu-cdi-refresh.path");
  std::vector<std::string> watched;
  for (auto at = text.find("\nPathChanged="); at != std::string::npos;
       at = text.find("\nPathChanged=", at + 1)) {
    const auto start = at + 13;
    watched.push_back(text.substr(start, text.find('\n', start) - start));
  }
  CHECK(watched == std::vector<std::string>{"/etc/ld.so.cache", "/lib/modules/%v/modules.dep",
                                            "/dev/nvidia-caps-imex-channels"});
}
