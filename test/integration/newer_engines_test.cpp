// The engines users install in 2026, from Debian 13 (containerd 1.7, Docker 26) and sid
// (containerd 2.1, Docker 28), unpacked by test/newer-engines.sh and started on temporary roots
// and sockets, with Debian 12's runc under them: each configured by gpu-ctk runtime configure
// from the file it writes itself (containerd) or an empty daemon.json (Docker), its
// configuration loaded back by that engine, and containers that see exactly the GPU they asked
// for, through the shim's environment request, CDI devices from our generated spec, and
// Docker's --gpus. Through containerd's CRI as a kubelet drives it: pods whose containers are
// configured from what our device plugin's Allocate answered, for each device-list strategy.
// Needs root.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>

#include "containerd.h"
#include "dockerd.h"
#include "engines/engines.h"
#include "gpu_fixture.h"
#include "real_driver.h"
#include "toml/toml.h"
#ifdef GCR_CRI_API
#include "cri_client.h"
#include "plugin_fixture.h"
#endif

using gcr::Json;
using gcr::test::GpuFixture;

namespace {

using gcr::test::ctk;
using gcr::test::kGpuNodes;
using gcr::test::kListGpus;

struct Release {
  const char* suite;
  const char* containerd_version;  // the `version` its `config default` writes
};
constexpr Release kReleases[] = {{"trixie", "version = 2"}, {"sid", "version = 3"}};

std::string root_of(const Release& release) {
  return gcr::test::newer_engines() + "/" + release.suite + "/root";
}

// Our generated spec for the fixture's simulated host, vendor nvidia.com, in `dir`.
void generate_spec(const GpuFixture& f, const std::string& dir) {
  const auto spec = ctk({"cdi", "generate", "--driver-root", f.host().driver_root(), "--dev-root",
                         f.host().dev_root(), "--ctk-path", gcr::test::built("gpu-ctk"), "--output",
                         dir + "/nvidia.yaml"});
  REQUIRE_MESSAGE(spec.exit_code == 0, spec.err);
}

// What kGpuNodes prints in a container given `gpus` (indices) of the simulated host.
std::string gpu_nodes(const GpuFixture& f, const std::vector<unsigned>& gpus) {
  std::vector<std::string> nodes;
  for (unsigned i : gpus) nodes.push_back("nvidia" + std::to_string(f.host().gpus().at(i).minor));
  std::sort(nodes.begin(), nodes.end());
  std::string out;
  for (const auto& n : nodes) out += n + " ";
  return out;
}

// `file` configured by gpu-ctk for the shim, with `flags`.
void configure_newer_containerd(const std::string& file, const std::vector<std::string>& flags) {
  std::vector<std::string> args = {"runtime",
                                   "configure",
                                   "--runtime=containerd",
                                   "--config",
                                   file,
                                   "--runtime-path",
                                   gcr::test::built("gpu-container-runtime")};
  args.insert(args.end(), flags.begin(), flags.end());
  const auto configured = ctk(args);
  REQUIRE_MESSAGE(configured.exit_code == 0, configured.err);
}

// `file` configured for the shim (with `flags`), as the containerd in `bin` reads it back.
toml::table configured_and_dumped(const std::string& bin, const std::string& file,
                                  const std::vector<std::string>& flags) {
  configure_newer_containerd(file, flags);
  const auto dump = gcr::test::run({bin + "/containerd", "--config", file, "config", "dump"});
  REQUIRE_MESSAGE(dump.exit_code == 0, dump.err);
  auto loaded = gcr::parse_toml(dump.out, "config dump");
  REQUIRE_MESSAGE(loaded.ok(), dump.out);
  return std::move(*loaded);
}

#ifdef GCR_CRI_API
// The image a pod's sandbox and containers run, under the sandbox image's name in `dump` (what
// a containerd's `config dump` printed: that image is never pulled), imported into the CRI's
// namespace: busybox, sleeping.
std::string import_sandbox_image(const gcr::test::Containerd& containerd, const GpuFixture& f,
                                 const std::string& dump) {
  const auto loaded = gcr::parse_toml(dump, "config dump");
  REQUIRE_MESSAGE(loaded.ok(), dump);
  const auto plugins = (*loaded)["plugins"];
  const std::string image = plugins["io.containerd.grpc.v1.cri"]["sandbox_image"].value_or(
      plugins["io.containerd.cri.v1.images"]["pinned_images"]["sandbox"].value_or(std::string()));
  REQUIRE_MESSAGE(!image.empty(), dump);
  gcr::test::make_busybox_rootfs(f.path("image"));
  const std::string tar = f.path("image.tar");
  const auto archived = gcr::test::run(
      {std::string(GCR_TEST_SOURCE_DIR) + "/scripts/image-archive.sh", f.path("image/rootfs"),
       image, R"({"Entrypoint":["/bin/busybox","sleep","600"]})", tar});
  REQUIRE_MESSAGE(archived.exit_code == 0, archived.err);
  const auto imported = containerd.ctr({"--namespace", "k8s.io", "images", "import", tar});
  REQUIRE_MESSAGE(imported.exit_code == 0, imported.err);
  return image;
}
#endif

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
      // What that containerd makes of the result: our runtime, the default, runc kept.
      const auto loaded = configured_and_dumped(bin, file, {"--set-as-default"});
      const std::string plugin =
          gcr::containerd_cri_plugin(release.suite == std::string("sid") ? 3 : 2);
      const auto cri = loaded["plugins"][plugin]["containerd"];
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

  TEST_CASE("containerd 1.7 and 2.1: the file Debian's package installs keeps runc") {
    // It lists no runtime: containerd's built-in runc must survive our drop-in (1.7's CRI plugin
    // failed to load with only ours listed).
    for (const auto& release : kReleases) {
      CAPTURE(release.suite);
      const std::string bin = root_of(release) + "/usr/bin";
      GpuFixture f;
      const std::string file = f.path("containerd/config.toml");
      gcr::test::write_file(file,
                            gcr::test::read_file(root_of(release) + "/etc/containerd/config.toml"));
      const auto loaded = configured_and_dumped(bin, file, {});
      const auto plugins = loaded["plugins"];
      const auto cri = plugins["io.containerd.cri.v1.runtime"]["containerd"].is_table()
                           ? plugins["io.containerd.cri.v1.runtime"]["containerd"]
                           : plugins["io.containerd.grpc.v1.cri"]["containerd"];
      CHECK(cri["default_runtime_name"].value_or(std::string()) == "runc");
      CHECK(cri["runtimes"]["runc"]["runtime_type"].value_or(std::string()) ==
            "io.containerd.runc.v2");
      CHECK(cri["runtimes"]["nvidia"]["options"]["BinaryName"].value_or(std::string()) ==
            gcr::test::built("gpu-container-runtime"));
      // The drop-in deleted by hand, not with --remove: containerd still loads its file (a
      // plain import of a missing file stops it: "failed to load TOML").
      REQUIRE(::unlink(f.path("containerd/conf.d/99-gpu-container-runtime.toml").c_str()) == 0);
      const auto without =
          gcr::test::run({bin + "/containerd", "--config", file, "config", "dump"});
      CHECK_MESSAGE(without.exit_code == 0, without.err);
      CHECK(without.out.find("runtimes.nvidia") == std::string::npos);
    }
  }

  TEST_CASE("containerd 1.7 and 2.1: ctr run --gpus through the shim, --device with our spec") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "engines need root");
    for (const auto& release : kReleases) {
      const std::string suite = release.suite;
      CAPTURE(suite);
      GpuFixture f;
      f.configure({{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
      generate_spec(f, f.path("cdi"));
      // ctr --gpus adds a hook running nvidia-container-cli from ctr's PATH (ours): prestart in
      // 1.7, createRuntime in 2.1. The shim reads it from either.
      gcr::test::make_symlink(gcr::test::built("gpu-ctk"), f.path("bin/nvidia-container-cli"));
      gcr::test::RunOptions ctr_env;
      ctr_env.env["PATH"] = f.path("bin") + ":/usr/sbin:/usr/bin:/sbin:/bin";
      gcr::test::RunOptions env;
      env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
      const gcr::test::Containerd containerd(f.path("containerd"), env,
                                             root_of(release) + "/usr/bin");
      gcr::test::make_busybox_rootfs(f.path("ctr"));
      const auto run_args = [&](const std::vector<std::string>& flags, const std::string& id) {
        std::vector<std::string> args{"run", "--rm"};
        args.insert(args.end(), flags.begin(), flags.end());
        args.insert(args.end(), {"--rootfs", f.path("ctr/rootfs"), id, "/bin/sh", "-c", kGpuNodes});
        return args;
      };
      const auto gpus = containerd.ctr(
          run_args({"--runc-binary", gcr::test::built("gpu-container-runtime"), "--gpus", "0"},
                   "gcr-ctr-gpus"),
          ctr_env);
      CHECK(gpus.err == "");
      CHECK(gpus.out == gpu_nodes(f, {0}));
      // --device with a CDI name: ctr 2.x resolves it from /etc/cdi and /var/run/cdi (no flag
      // names other folders), plain runc runs our spec's edits; 1.7's ctr takes a device path.
      const auto device =
          containerd.ctr_with_cdi_specs(f.path("cdi"), f.path("cdi-ns"),
                                        run_args({"--device", "nvidia.com/gpu=1"}, "gcr-ctr-cdi"));
      if (suite == "sid") {
        CHECK(device.err == "");
        CHECK(device.out == gpu_nodes(f, {1}));
      } else {
        CHECK(device.exit_code != 0);
        CHECK(device.err.find("stat nvidia.com/gpu=1: no such file") != std::string::npos);
      }
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
      // The same through the shim, with a CUDA image's NVIDIA_VISIBLE_DEVICES=all: the spec
      // makes it void, so the shim adds no other GPU.
      CHECK(run({"--runtime", "nvidia", "-e", "NVIDIA_VISIBLE_DEVICES=all", "--device",
                 "nvidia.com/gpu=1"}) ==
            "nvidia-modeset nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl ");
      // --gpus: dockerd's nvidia driver adds the prestart hook, which our shim reads.
      CHECK(run({"--runtime", "nvidia", "--gpus", "device=1"}) ==
            "nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl ");
    }
  }

  TEST_CASE("containerd 1.7 and 2.1 through the CRI: pods get the GPUs our plugin allocated") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "engines need root");
#ifndef GCR_CRI_API
    FAIL("built without the CRI API: run test/newer-engines.sh, then configure again");
#else
    // What our plugin's Allocate answers for each device-list strategy, as the kubelet gets it:
    // a GPU for envvar and cdi-annotations, two for cdi-cri (the CRI's CDI_devices field).
    struct Strategy {
      const char* name;
      std::vector<unsigned> gpus;
      v1beta1::ContainerAllocateResponse answer;
    };
    std::vector<Strategy> strategies = {
        {"envvar", {1}, {}}, {"cdi-annotations", {2}, {}}, {"cdi-cri", {0, 3}, {}}};
    for (auto& s : strategies) {
      gcr::test::PluginFixture plugin(Json{{"device-list", {s.name}}});
      plugin.start();
      std::vector<std::string> ids;
      for (unsigned i : s.gpus) ids.push_back(plugin.host.gpus().at(i).uuid);
      v1beta1::AllocateResponse response;
      const auto status = plugin.kubelet->allocate(ids, response);
      REQUIRE_MESSAGE(status.ok(), status.error_message());
      s.answer = response.container_responses(0);
    }
    // Each answer holds its strategy's form alone.
    CHECK(strategies[0].answer.envs().size() == 1);
    CHECK(strategies[1].answer.annotations().size() == 1);
    CHECK(strategies[2].answer.cdi_devices().size() == 2);
    for (const auto& s : strategies) {
      CHECK(s.answer.envs().size() + s.answer.annotations().size() +
                static_cast<std::size_t>(s.answer.cdi_devices().size()) ==
            (s.gpus.size() == 2 ? 2U : 1U));
    }
    for (const auto& release : kReleases) {
      const std::string suite = release.suite;
      CAPTURE(suite);
      const std::string bin = root_of(release) + "/usr/bin";
      GpuFixture f;
      // Our shim (the pods' runtime) and containerd read the node's CDI specs from one folder.
      const std::string dir = f.path("containerd");
      f.configure({{"runtime", {{"runtimes", {gcr::test::runc_path()}}}},
                   {"cdi", {{"spec-dirs", {dir + "/cdi"}}}}});
      // containerd's own default file on private paths, configured by gpu-ctk: our runtime as
      // the handler a RuntimeClass names; on 1.7, --cdi turns on CDI.
      const auto stock = gcr::test::run({bin + "/containerd", "config", "default"});
      REQUIRE(stock.exit_code == 0);
      const std::string file = dir + "/config.toml";
      gcr::test::write_file(file, gcr::test::Containerd::private_config(stock.out, dir));
      configure_newer_containerd(file, release.suite == std::string("trixie")
                                           ? std::vector<std::string>{"--cdi"}
                                           : std::vector<std::string>{});
      generate_spec(f, dir + "/cdi");
      const auto dump = gcr::test::run({bin + "/containerd", "--config", file, "config", "dump"});
      REQUIRE_MESSAGE(dump.exit_code == 0, dump.err);

      gcr::test::RunOptions env;
      env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
      const gcr::test::Containerd containerd(dir, file, dir + "/state/containerd.sock", env, bin);
      const std::string image = import_sandbox_image(containerd, f, dump.out);
      const gcr::test::CriClient cri(containerd.socket());
      cri.wait_until_ready();
      const std::string version = cri.version();
      CAPTURE(version);
      gcr::test::CriPod pod(cri, "gcr-gpus", "nvidia", f.path("pods"));
      for (const auto& s : strategies) {
        const std::string strategy = s.name;
        CAPTURE(strategy);
        const std::string id =
            pod.start_container(s.name, image, {"/bin/busybox", "sleep", "600"}, s.answer);
        const auto seen = pod.exec(id, {"/bin/sh", "-c", kGpuNodes});
        CHECK_MESSAGE(seen.err == "", gcr::test::read_file(dir + "/containerd.log"));
        CHECK(seen.out == gpu_nodes(f, s.gpus));
      }
    }
#endif
  }
}
