// The engines users install in 2026, from Debian 13 (containerd 1.7, Docker 26) and sid
// (containerd 2.1, Docker 28), unpacked by test/newer-engines.sh and started on temporary roots
// and sockets, with Debian 12's runc under them: each configured by gpu-ctk runtime configure
// from the file it writes itself (containerd) or an empty daemon.json (Docker), its
// configuration loaded back by that engine, and containers that see exactly the GPU they asked
// for, through the shim's environment request, CDI devices from our generated spec, and
// Docker's --gpus. Needs root.
#include <doctest/doctest.h>

#include "containerd.h"
#include "dockerd.h"
#include "engines/engines.h"
#include "gpu_fixture.h"
#include "real_driver.h"
#include "toml/toml.h"

using gcr::Json;
using gcr::test::GpuFixture;

namespace {

const std::string kListGpus = "ls /dev | grep nvidia | tr '\\n' ' '";

struct Release {
  const char* suite;
  const char* containerd_version;  // the `version` its `config default` writes
};
constexpr Release kReleases[] = {{"trixie", "version = 2"}, {"sid", "version = 3"}};

std::string root_of(const Release& release) {
  return gcr::test::newer_engines() + "/" + release.suite + "/root";
}

gcr::test::ProcessResult ctk(const std::vector<std::string>& args) {
  std::vector<std::string> argv{gcr::test::built("gpu-ctk")};
  argv.insert(argv.end(), args.begin(), args.end());
  return gcr::test::run(argv);
}

// Our generated spec for the fixture's simulated host, vendor nvidia.com, in `dir`.
void generate_spec(const GpuFixture& f, const std::string& dir) {
  const auto spec = ctk({"cdi", "generate", "--driver-root", f.host().driver_root(), "--dev-root",
                         f.host().dev_root(), "--ctk-path", gcr::test::built("gpu-ctk"), "--output",
                         dir + "/nvidia.yaml"});
  REQUIRE_MESSAGE(spec.exit_code == 0, spec.err);
}

}  // namespace

TEST_SUITE("newer engines") {
  TEST_CASE("containerd 1.7 and 2.1: configure their own default file, load it, ctr run") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "engines need root");
    for (const auto& release : kReleases) {
      CAPTURE(release.suite);
      const std::string bin = root_of(release) + "/usr/bin";
      GpuFixture f;
      f.configure({{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
      const auto stock = gcr::test::run({bin + "/containerd", "config", "default"});
      REQUIRE(stock.exit_code == 0);
      CHECK(stock.out.find(release.containerd_version) != std::string::npos);
      const std::string file = f.path("containerd/config.toml");
      gcr::test::write_file(file, stock.out);
      const auto configured =
          ctk({"runtime", "configure", "--runtime=containerd", "--config", file, "--set-as-default",
               "--runtime-path", gcr::test::built("gpu-container-runtime")});
      REQUIRE_MESSAGE(configured.exit_code == 0, configured.err);
      // What that containerd makes of the result: our runtime, the default, runc kept.
      const auto dump = gcr::test::run({bin + "/containerd", "--config", file, "config", "dump"});
      REQUIRE_MESSAGE(dump.exit_code == 0, dump.err);
      const auto loaded = gcr::parse_toml(dump.out, "config dump");
      REQUIRE_MESSAGE(loaded.ok(), dump.out);
      const std::string plugin =
          gcr::containerd_cri_plugin(release.suite == std::string("sid") ? 3 : 2);
      const auto cri = (*loaded)["plugins"][plugin]["containerd"];
      CHECK(cri["default_runtime_name"].value_or(std::string()) == "nvidia");
      CHECK(cri["runtimes"]["nvidia"]["options"]["BinaryName"].value_or(std::string()) ==
            gcr::test::built("gpu-container-runtime"));
      CHECK(cri["runtimes"]["runc"].is_table());

      gcr::test::RunOptions env;
      env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
      const gcr::test::Containerd containerd(f.path("containerd/daemon"), env, bin);
      const auto r = containerd.run_through_shim(
          f.path("ctr"), {"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=utility"},
          kListGpus);
      CHECK(r.err == "");
      CHECK(r.out == "nvidia0 nvidiactl ");
    }
  }

  TEST_CASE("Docker 26 and 28: the runtime by env, CDI devices from our spec, and --gpus") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "engines need root");
    for (const auto& release : kReleases) {
      CAPTURE(release.suite);
      GpuFixture f;
      f.configure({{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
      const std::string daemon_json = f.path("docker/daemon.json");
      gcr::test::write_file(daemon_json, "");
      const auto configured =
          ctk({"runtime", "configure", "--runtime=docker", "--config", daemon_json, "--cdi",
               "--runtime-path", gcr::test::built("gpu-container-runtime"),
               "--runtime-arg=--gpu-config=" + f.config_path()});
      REQUIRE_MESSAGE(configured.exit_code == 0, configured.err);
      const std::string specs = f.path("cdi");
      generate_spec(f, specs);
      // The prestart hook dockerd looks for to turn --gpus into a request.
      gcr::test::make_symlink(gcr::test::built("gpu-ctk"),
                              f.path("bin/nvidia-container-runtime-hook"));
      const gcr::test::Dockerd dockerd(f.path("docker"), daemon_json, f.path("bin"),
                                       root_of(release) + "/usr", {"--cdi-spec-dir", specs});
      REQUIRE_MESSAGE(dockerd.wait_until_serving("runc"), dockerd.log());
      const std::string image = gcr::test::make_busybox_image_tar(f.path("image"));
      REQUIRE(dockerd.docker({"import", image, "gcr-busybox"}).exit_code == 0);
      const auto run = [&](const std::vector<std::string>& request) {
        std::vector<std::string> args{"run", "--rm", "--network", "none"};
        args.insert(args.end(), request.begin(), request.end());
        args.insert(args.end(), {"gcr-busybox", "sh", "-c", kListGpus});
        const auto r = dockerd.docker(args);
        CHECK_MESSAGE(r.err == "", dockerd.log());
        return r.out;
      };
      CHECK(run({"--runtime", "nvidia", "-e", "NVIDIA_VISIBLE_DEVICES=1", "-e",
                 "NVIDIA_DRIVER_CAPABILITIES=utility"}) == "nvidia0 nvidiactl ");
      // CDI: dockerd itself applies our spec's edits (plain runc), hooks and all.
      CHECK(run({"--device", "nvidia.com/gpu=1"}) ==
            "nvidia-modeset nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl ");
      // --gpus: dockerd's nvidia driver adds the prestart hook, which our shim reads.
      CHECK(run({"--runtime", "nvidia", "--gpus", "device=1"}) ==
            "nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl ");
    }
  }
}
