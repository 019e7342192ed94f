// NVIDIA's commands after the switch (issue 16): `ctr run --gpus` through containerd and the
// shim (and through plain runc, where our nvidia-container-cli says what to change),
// nvidia-container-cli info and list, nvidia-ctk's documented invocations against our
// spellings, and gpu-ctk config import. Needs root.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <utility>

#include "containerd.h"
#include "gpu_fixture.h"

using gcr::Json;
using gcr::test::GpuFixture;
using gcr::test::ProcessResult;

namespace {

void require_containerd() {
  REQUIRE_MESSAGE(gcr::test::is_root(), "containerd needs root");
  REQUIRE_MESSAGE(gcr::test::exists("/usr/bin/containerd"),
                  "containerd is not installed: run scripts/install-deps.sh");
}

// A directory of compatibility names, as the package installs them in /usr/bin.
std::string compat_bin(const GpuFixture& f) {
  const std::string bin = f.path("compat-bin");
  for (const char* name : {"nvidia-container-cli", "nvidia-ctk", "nvidia-cdi-hook"}) {
    if (!gcr::test::exists(bin + "/" + name))
      gcr::test::make_symlink(gcr::test::built("gpu-ctk"), bin + "/" + name);
  }
  return bin;
}

// The fixture's configuration, and none of nvidia-ctk's NVIDIA_CTK_* variables the machine may
// have set (nvidia-ctk reads them).
gcr::test::RunOptions ctk_env(const GpuFixture& f) {
  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
  for (char** var = environ; *var != nullptr; ++var) {
    const std::string entry(*var);
    if (entry.rfind("NVIDIA_CTK_", 0) == 0)
      env.unset_env.push_back(entry.substr(0, entry.find('=')));
  }
  return env;
}

ProcessResult as(const GpuFixture& f, const std::string& name,
                 const std::vector<std::string>& args) {
  std::vector<std::string> argv{compat_bin(f) + "/" + name};
  argv.insert(argv.end(), args.begin(), args.end());
  return gcr::test::run(argv, ctk_env(f));
}

ProcessResult gpu_ctk(const GpuFixture& f, const std::vector<std::string>& args,
                      std::optional<std::string> stdin_text = std::nullopt) {
  std::vector<std::string> argv{gcr::test::built("gpu-ctk")};
  argv.insert(argv.end(), args.begin(), args.end());
  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
  env.stdin_text = std::move(stdin_text);
  return gcr::test::run(argv, env);
}

// ctr with our nvidia-container-cli first in PATH (ctr looks it up there, and containerd).
struct CtrGpus {
  GpuFixture f;
  gcr::test::RunOptions ctr_env;
  std::unique_ptr<gcr::test::Containerd> containerd;

  CtrGpus()
      : f(gcr::test::SimHostOptions{},
          Json{{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}}) {
    ctr_env.env["PATH"] =
        compat_bin(f) + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    gcr::test::RunOptions daemon_env;
    daemon_env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
    containerd = std::make_unique<gcr::test::Containerd>(f.path("containerd"), daemon_env);
    gcr::test::make_busybox_rootfs(f.path("ctr"));
  }

  ProcessResult run(const std::vector<std::string>& flags, const std::string& id,
                    const std::string& script) const {
    std::vector<std::string> args{"run", "--rm"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--rootfs", f.path("ctr/rootfs"), id, "/bin/sh", "-c", script});
    return containerd->ctr(args, ctr_env);
  }
};

std::string with_dir(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

using gcr::test::kGpuNodes;

}  // namespace

TEST_CASE("ctr run --gpus through the shim: that GPU, every capability's libraries") {
  require_containerd();
  CtrGpus c;
  const std::string shim = gcr::test::built("gpu-container-runtime");
  const std::string libs = c.f.host().lib_dir();
  for (unsigned index : {0u, 1u}) {
    CAPTURE(index);
    const std::string minor = std::to_string(c.f.host().gpus().at(index).minor);
    // The image's NVIDIA_VISIBLE_DEVICES=all loses to what ctr was told.
    const auto r = c.run({"--runc-binary", shim, "--gpus", std::to_string(index), "--env",
                          "NVIDIA_VISIBLE_DEVICES=all"},
                         "gcr-ctr-gpus-" + std::to_string(index),
                         kGpuNodes + "; cd " + libs +
                             " && ls libcuda.so.* libnvcuvid.so.* libGLX_nvidia.so.* | tr "
                             "'\\n' ' '");
    CHECK(r.err == "");
    const std::string v = gcr::test::SimHost::version();
    CHECK(r.out == "nvidia" + minor + " libGLX_nvidia.so.0 libGLX_nvidia.so." + v +
                       " libcuda.so.1 libcuda.so." + v + " libnvcuvid.so.1 libnvcuvid.so." + v +
                       " ");
  }
}

TEST_CASE("ctr run --gpus with an index the host lacks: one line in ctr's output, nothing run") {
  require_containerd();
  CtrGpus c;
  const auto r = c.run({"--runc-binary", gcr::test::built("gpu-container-runtime"), "--gpus", "9"},
                       "gcr-ctr-gpus-missing", "echo started");
  CHECK(r.exit_code != 0);
  CHECK(r.out.find("started") == std::string::npos);
  CHECK(r.err.find("ctr --gpus (nvidia-container-cli --device)") != std::string::npos);
  CHECK(r.err.find("`9`") != std::string::npos);
}

TEST_CASE("ctr run --gpus with plain runc: nvidia-container-cli fails and says what to change") {
  require_containerd();
  CtrGpus c;
  const auto r = c.run({"--gpus", "0"}, "gcr-ctr-gpus-runc", "echo started");
  CHECK(r.exit_code != 0);
  CHECK(r.out.find("started") == std::string::npos);
  CHECK(r.err.find("nvidia-container-cli: this container was started by plain runc") !=
        std::string::npos);
  CHECK(r.err.find("--runc-binary /usr/bin/gpu-container-runtime") != std::string::npos);
}

TEST_CASE("nvidia-container-cli info and list: our discovery in its format") {
  REQUIRE(gcr::test::is_root());
  GpuFixture f;
  const auto info = as(f, "nvidia-container-cli", {"info"});
  REQUIRE(info.exit_code == 0);
  const auto& gpu = f.host().gpus().at(0);
  CHECK(info.out.find("NVRM version:   " + gcr::test::SimHost::version() + "\n") == 0);
  CHECK(info.out.find("\nDevice Index:   0\nDevice Minor:   " + std::to_string(gpu.minor) + "\n") !=
        std::string::npos);
  CHECK(info.out.find("GPU UUID:       " + gpu.uuid + "\n") != std::string::npos);
  CHECK(info.out.find("Bus Location:   0000" + gpu.bus + "\n") != std::string::npos);
  const auto csv = as(f, "nvidia-container-cli", {"--load-kmods", "info", "--csv"});
  CHECK(csv.out.find("NVRM version,CUDA version\n" + gcr::test::SimHost::version() + ",") == 0);

  const auto& second = f.host().gpus().at(1);
  const auto list = as(f, "nvidia-container-cli", {"list", "--device=1"});
  REQUIRE(list.exit_code == 0);
  const std::string dev = f.host().dev_root() + "/dev/";
  CHECK(list.out == dev + "nvidiactl\n" + dev + "nvidia-modeset\n" + dev + "nvidia-uvm\n" + dev +
                        "nvidia-uvm-tools\n" + dev + "nvidia" + std::to_string(second.minor) +
                        "\n");
  const auto all = as(f, "nvidia-container-cli", {"list"});
  CHECK(all.out.find(f.host().driver_root() + f.host().lib_dir() + "/libcuda.so." +
                     gcr::test::SimHost::version() + "\n") != std::string::npos);
  CHECK(all.out.find(f.host().driver_root() + f.host().lib32_dir() + "/libcuda.so." +
                     gcr::test::SimHost::version() + "\n") != std::string::npos);
  CHECK(all.out.find("/usr/bin/nvidia-smi\n") != std::string::npos);

  const auto configure = as(f, "nvidia-container-cli", {"configure", "--device=0", "/rootfs"});
  CHECK(configure.exit_code == 1);
  CHECK(configure.err.find("nothing was configured") != std::string::npos);
  const auto bad = as(f, "nvidia-container-cli", {"list", "--device=7"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("nvidia-container-cli: device error: ") == 0);
}

TEST_CASE("nvidia-ctk: NVIDIA's documented invocations write what our spellings write") {
  REQUIRE(gcr::test::is_root());
  GpuFixture f;
  struct Pair {
    std::vector<std::string> nvidia;
    std::vector<std::string> ours;
    std::string file;  // what --config names (the engine's file)
  };
  const std::vector<Pair> pairs = {
      {{"runtime", "configure", "--runtime=docker"}, {"runtime", "configure"}, "daemon.json"},
      {{"runtime", "configure", "--runtime=docker", "--set-as-default"},
       {"runtime", "configure", "--runtime", "docker", "--set-as-default"},
       "daemon.json"},
      {{"runtime", "configure", "--runtime=docker", "--cdi.enabled"},
       {"runtime", "configure", "--runtime=docker", "--cdi"},
       "daemon.json"},
      {{"runtime", "configure", "--runtime=containerd", "--nvidia-set-as-default"},
       {"runtime", "configure", "--runtime=containerd", "--set-as-default"},
       "config.toml"},
      {{"runtime", "configure", "--runtime=containerd", "--nvidia-runtime-name=gpu", "--enable-cdi",
        "--config-source=file", "--config-mode=config-file"},
       {"runtime", "configure", "--runtime=containerd", "--runtime-name=gpu", "--cdi"},
       "config.toml"},
      {{"--debug", "runtime", "configure", "-runtime=crio", "-set-as-default"},
       {"runtime", "configure", "--runtime=crio", "--set-as-default"},
       "crio.conf"},
  };
  int n = 0;
  for (const auto& p : pairs) {
    CAPTURE(n);
    const std::string theirs = f.path("nvidia-" + std::to_string(n) + "/" + p.file);
    const std::string mine = f.path("ours-" + std::to_string(n) + "/" + p.file);
    auto nvidia_args = p.nvidia;
    nvidia_args.push_back("--config=" + theirs);
    auto our_args = p.ours;
    our_args.insert(our_args.end(), {"--config", mine});
    const auto a = as(f, "nvidia-ctk", nvidia_args);
    const auto b = gpu_ctk(f, our_args);
    REQUIRE_MESSAGE(a.exit_code == 0, a.err);
    REQUIRE_MESSAGE(b.exit_code == 0, b.err);
    for (const auto& name : {p.file, std::string("conf.d/99-gpu-container-runtime.toml"),
                             std::string("crio.conf.d/99-gpu-container-runtime.conf")}) {
      const std::string x = f.path("nvidia-" + std::to_string(n) + "/" + name);
      const std::string y = f.path("ours-" + std::to_string(n) + "/" + name);
      CHECK(gcr::test::exists(x) == gcr::test::exists(y));
      // Equal but for the directory each was written in (containerd's imports name it).
      if (gcr::test::exists(x))
        CHECK(with_dir(gcr::test::read_file(x), "/nvidia-" + std::to_string(n) + "/",
                       "/ours-" + std::to_string(n) + "/") == gcr::test::read_file(y));
    }
    ++n;
  }
  // containerd starts on what nvidia-ctk wrote.
  const auto dump = gcr::test::run(
      {"/usr/bin/containerd", "--config", f.path("nvidia-3/config.toml"), "config", "dump"});
  CHECK(dump.exit_code == 0);
  CHECK(dump.out.find("default_runtime_name = \"nvidia\"") != std::string::npos);

  // --dry-run prints the engine's file alone (piped to jq in NVIDIA's docs) and writes nothing;
  // for containerd the drop-in, with --set-as-default=true as NVIDIA's steps write it.
  const auto docker_dry = as(f, "nvidia-ctk",
                             {"runtime", "configure", "--runtime=docker", "--set-as-default=true",
                              "--dry-run", "--config=" + f.path("dry/daemon.json")});
  REQUIRE_MESSAGE(docker_dry.exit_code == 0, docker_dry.err);
  const auto dry_json = Json::parse(docker_dry.out);
  CHECK(dry_json["default-runtime"] == "nvidia");
  CHECK_FALSE(gcr::test::exists(f.path("dry/daemon.json")));
  const auto containerd_dry =
      as(f, "nvidia-ctk",
         {"runtime", "configure", "--runtime=containerd", "--dry-run", "--set-as-default",
          "--config=" + f.path("nvidia-3/config.toml")});
  REQUIRE_MESSAGE(containerd_dry.exit_code == 0, containerd_dry.err);
  CHECK(containerd_dry.out ==
        gcr::test::read_file(f.path("nvidia-3/conf.d/99-gpu-container-runtime.toml")));
  // A version 1 file is the one written, whatever drop-in an earlier setup left beside it.
  gcr::test::write_file(f.path("dry1/config.toml"), "[plugins.cri]\nsandbox_image = \"x\"\n");
  gcr::test::write_file(f.path("dry1/conf.d/99-gpu-container-runtime.toml"), "# stale\n");
  const auto v1_dry = as(f, "nvidia-ctk",
                         {"runtime", "configure", "--runtime=containerd", "--dry-run",
                          "--config=" + f.path("dry1/config.toml")});
  REQUIRE_MESSAGE(v1_dry.exit_code == 0, v1_dry.err);
  CHECK(v1_dry.out.find("sandbox_image = 'x'") != std::string::npos);
  CHECK(v1_dry.out.find("stale") == std::string::npos);

  // cdi generate and list under NVIDIA's spellings.
  const auto generated =
      as(f, "nvidia-ctk",
         {"cdi", "generate", "--output=" + f.path("cdi/nvidia.yaml"),
          "--device-name-strategy=type-index", "--cdi-vendor=example.com", "--mode=auto"});
  REQUIRE_MESSAGE(generated.exit_code == 0, generated.err);
  // NVIDIA's hook-path flag: our nvidia-cdi-hook link is this program; NVIDIA's own is refused
  // (the spec's hooks run `gpu-ctk hook ...`, which it does not know).
  const auto our_hook =
      as(f, "nvidia-ctk",
         {"cdi", "generate", "--nvidia-cdi-hook-path=" + compat_bin(f) + "/nvidia-cdi-hook"});
  CHECK_MESSAGE(our_hook.exit_code == 0, our_hook.err);
  CHECK(our_hook.out.find("path: " + compat_bin(f) + "/nvidia-cdi-hook") != std::string::npos);
  gcr::test::make_dirs(f.path("theirs"));
  std::filesystem::copy_file("/bin/true", f.path("theirs/nvidia-cdi-hook"));
  const auto their_hook =
      as(f, "nvidia-ctk",
         {"cdi", "generate", "--nvidia-cdi-hook-path=" + f.path("theirs/nvidia-cdi-hook")});
  CHECK(their_hook.exit_code != 0);
  CHECK(their_hook.err.find("is NVIDIA's program, not gpu-ctk") != std::string::npos);
  const auto listed = as(f, "nvidia-ctk", {"cdi", "list", "--spec-dir", f.path("cdi")});
  CHECK(listed.out.find("example.com/gpu=gpu0\n") != std::string::npos);
  CHECK(listed.out.find("example.com/gpu=all\n") != std::string::npos);
  CHECK(listed.out.find("example.com/gpu=0\n") == std::string::npos);

  // cdi transform root under NVIDIA's spellings: the same file as ours.
  const std::string generated_file = f.path("cdi/nvidia.yaml");
  const auto theirs =
      as(f, "nvidia-ctk",
         {"cdi", "transform", "root", "-from=" + f.host().driver_root(), "-to=/run/nvidia/driver",
          "--input=" + generated_file, "--output=" + f.path("transformed/nvidia")});
  REQUIRE_MESSAGE(theirs.exit_code == 0, theirs.err);
  const auto mine = gpu_ctk(f,
                            {"cdi", "transform", "root", "--from", f.host().driver_root(), "--to",
                             "/run/nvidia/driver", "--output", f.path("transformed/ours.yaml")},
                            gcr::test::read_file(generated_file));
  REQUIRE_MESSAGE(mine.exit_code == 0, mine.err);
  const std::string transformed = gcr::test::read_file(f.path("transformed/nvidia.yaml"));
  CHECK(transformed == gcr::test::read_file(f.path("transformed/ours.yaml")));
  CHECK(transformed.find("hostPath: /run/nvidia/driver/") != std::string::npos);
  CHECK(transformed.find(f.host().driver_root()) == std::string::npos);

  // As nvidia-cdi-refresh.service runs it: the file and the names from NVIDIA_CTK_* variables;
  // gpu-ctk under its own name reads none of them (the spec goes to stdout).
  gcr::test::make_dirs(f.path("cdi-env"));
  gcr::test::RunOptions env = ctk_env(f);
  env.env["NVIDIA_CTK_CDI_OUTPUT_FILE_PATH"] = f.path("cdi-env/nvidia.yaml");
  env.env["NVIDIA_CTK_CDI_GENERATE_DEVICE_NAME_STRATEGIES"] = "uuid";
  const auto refreshed = gcr::test::run({compat_bin(f) + "/nvidia-ctk", "cdi", "generate"}, env);
  REQUIRE_MESSAGE(refreshed.exit_code == 0, refreshed.err);
  const auto names = as(f, "nvidia-ctk", {"cdi", "list", "--spec-dir", f.path("cdi-env")});
  CHECK(names.out.find("nvidia.com/gpu=" + f.host().gpus().at(0).uuid + "\n") != std::string::npos);
  CHECK(names.out.find("nvidia.com/gpu=0\n") == std::string::npos);
  const auto ours = gcr::test::run({gcr::test::built("gpu-ctk"), "cdi", "generate"}, env);
  REQUIRE_MESSAGE(ours.exit_code == 0, ours.err);
  CHECK(ours.out.find("cdiVersion") != std::string::npos);
  CHECK(ours.out.find("name: \"0\"") != std::string::npos);
}

TEST_CASE("nvidia-ctk config --set ... --in-place: NVIDIA's keys set in our file, comments kept") {
  REQUIRE(gcr::test::is_root());
  GpuFixture f;
  const std::string file = f.path("set/config.toml");
  const std::string stock = gpu_ctk(f, {"config", "default"}).out;
  gcr::test::write_file(file, stock);
  auto env = ctk_env(f);
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = file;
  const auto nvidia_ctk = [&](std::vector<std::string> args) {
    args.insert(args.begin(), compat_bin(f) + "/nvidia-ctk");
    return gcr::test::run(args, env);
  };
  // Rootless Docker's step (in `set -e` install scripts): nothing here to set, said, exit 0.
  const auto rootless =
      nvidia_ctk({"config", "--set", "nvidia-container-cli.no-cgroups", "--in-place"});
  CHECK(rootless.exit_code == 0);
  CHECK(rootless.err.find("warning: nvidia-container-cli.no-cgroups") != std::string::npos);
  CHECK(gcr::test::read_file(file) == stock);
  CHECK_FALSE(gcr::test::exists(file + ".bak"));
  // Keys with an equivalent: set in place; without --in-place the result is printed.
  const std::vector<std::string> sets = {
      "config", "--set", "accept-nvidia-visible-devices-envvar-when-unprivileged=false", "--set",
      "nvidia-container-runtime.runtimes=crun,runc"};
  const auto printed = nvidia_ctk(sets);
  REQUIRE_MESSAGE(printed.exit_code == 0, printed.err);
  CHECK(gcr::test::read_file(file) == stock);
  auto in_place = sets;
  in_place.push_back("-i");
  const auto written = nvidia_ctk(in_place);
  REQUIRE_MESSAGE(written.exit_code == 0, written.err);
  const std::string now = gcr::test::read_file(file);
  CHECK(now == printed.out);
  CHECK(gcr::test::read_file(file + ".bak") == stock);
  CHECK(now.find("accept-env-when-unprivileged = false\n") != std::string::npos);
  CHECK(now.find("runtimes = [\"crun\", \"runc\"]\n") != std::string::npos);
  CHECK(now.rfind(stock.substr(0, stock.find('\n')), 0) == 0);  // its comments kept
  CHECK(now.size() > stock.size() - 40);
  const auto checked = gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", file});
  CHECK_MESSAGE(checked.exit_code == 0, checked.err);
  // No file: a key with no equivalent makes none (an empty config.toml would have taken the
  // place of a config.json); a config.json in effect is not edited.
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.path("set/none.toml");
  CHECK(nvidia_ctk({"config", "--set", "nvidia-container-cli.no-cgroups", "-i"}).exit_code == 0);
  CHECK_FALSE(gcr::test::exists(f.path("set/none.toml")));
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.path("set/config.json");
  gcr::test::write_file(f.path("set/config.json"), "{}\n");
  const auto json =
      nvidia_ctk({"config", "--set", "nvidia-container-runtime.log-level=debug", "-i"});
  CHECK(json.exit_code == 1);
  CHECK(json.err.find("is not a .toml file") != std::string::npos);
  CHECK(gcr::test::read_file(f.path("set/config.json")) == "{}\n");
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = file;
  const auto bad = nvidia_ctk({"config", "--set", "nvidia-container-runtime.log-level=loud", "-i"});
  CHECK(bad.exit_code == 1);
  CHECK(bad.err.find("nvidia-ctk config: ") == 0);
  CHECK(gcr::test::read_file(file) == now);
}

TEST_CASE("nvidia-ctk: what gpu-ctk does not do is an error that names it") {
  REQUIRE(gcr::test::is_root());
  GpuFixture f;
  const auto source = as(
      f, "nvidia-ctk", {"runtime", "configure", "--runtime=containerd", "--config-source=command"});
  CHECK(source.exit_code == 2);
  CHECK(source.err.find("--config-source=command is not supported") != std::string::npos);
  const auto system = as(f, "nvidia-ctk", {"system", "create-device-nodes"});
  CHECK(system.exit_code == 2);
  CHECK(system.err ==
        "gpu-ctk system: create-device-nodes is not supported: gpu-ctk makes no device node: "
        "nvidia-modprobe makes them (-c=<minor> for a GPU, -u for nvidia-uvm)\n");
  const auto unknown = as(f, "nvidia-ctk", {"runtime", "configure", "--frobnicate"});
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.err.find("frobnicate") != std::string::npos);
  CHECK(as(f, "nvidia-ctk", {"--version"}).out.find("(as nvidia-ctk)") != std::string::npos);
}

TEST_CASE("nvidia-cdi-hook: NVIDIA's CDI hook program is `nvidia-ctk hook`") {
  REQUIRE(gcr::test::is_root());
  GpuFixture f;
  CHECK(as(f, "nvidia-cdi-hook", {"--version"}).out.find("(as nvidia-cdi-hook)") !=
        std::string::npos);
  CHECK(as(f, "nvidia-cdi-hook", {"--help"}).out.find("enable-cuda-compat") != std::string::npos);
  const auto spec = as(f, "nvidia-cdi-hook", {"enable-cuda-compat", "--container-spec=x.json"});
  CHECK(spec.exit_code == 2);
  CHECK(spec.err ==
        "nvidia-cdi-hook hook enable-cuda-compat: --container-spec is not supported: the OCI "
        "state is read from stdin\n");
  const auto later = as(f, "nvidia-cdi-hook", {"--debug", "update-later-version-thing"});
  CHECK(later.exit_code == 0);
  CHECK(later.err ==
        "gpu-ctk hook: warning: unknown hook `update-later-version-thing`: nothing done\n");
  // A hook that runs, on the rootfs the state on stdin names (in real containers:
  // cuda_compat_test).
  const std::string compat = f.path("rootfs/usr/local/cuda/compat/libcuda.so.575.57.08");
  gcr::test::write_file(
      compat, gcr::test::read_file(std::string(GCR_STUB_DIR) + "/compat/libcuda.so.575.57.08"));
  gcr::test::RunOptions state;
  state.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
  state.stdin_text = Json{{"ociVersion", "1.0.2"}, {"id", "x"},
                          {"status", "creating"},  {"pid", 1},
                          {"bundle", f.path("")},  {"root", f.path("rootfs")}}
                         .dump();
  const auto hook = gcr::test::run(
      {compat_bin(f) + "/nvidia-cdi-hook", "enable-cuda-compat", "--host-driver-version=550.54.15"},
      state);
  CHECK(hook.err == "");
  CHECK(hook.exit_code == 0);
  CHECK(gcr::test::read_file(f.path("rootfs/etc/ld.so.conf.d/00-compat-gpu-container-runtime.conf"))
            .ends_with("\n/usr/local/cuda/compat\n"));
}

TEST_CASE("gpu-ctk config import: prints ours, --write installs it keeping .bak, checks pass") {
  REQUIRE(gcr::test::is_root());
  GpuFixture f;
  const std::string nvidia = gcr::test::test_source("data/nvidia/config-custom.toml");
  const auto printed = gpu_ctk(f, {"config", "import", nvidia});
  REQUIRE_MESSAGE(printed.exit_code == 0, printed.err);
  CHECK(printed.out.find("accept-volume-mounts = true  # "
                         "accept-nvidia-visible-devices-as-volume-mounts\n") != std::string::npos);

  const std::string target = f.path("etc/config.toml");
  gcr::test::write_file(target, "[runtime]\nlog-level = \"error\"\n");
  gcr::test::RunOptions env;
  env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = target;
  const auto written =
      gcr::test::run({gcr::test::built("gpu-ctk"), "config", "import", nvidia, "--write"}, env);
  REQUIRE_MESSAGE(written.exit_code == 0, written.err);
  CHECK(written.out.find("wrote " + target) == 0);
  CHECK(gcr::test::read_file(target + ".bak") == "[runtime]\nlog-level = \"error\"\n");
  CHECK(gcr::test::read_file(target) == printed.out);
  const auto checked = gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", target});
  CHECK(checked.exit_code == 0);

  gcr::test::write_file(f.path("broken.toml"), "disable-require = false\n[nvidia-container-cli\n");
  const auto broken = gpu_ctk(f, {"config", "import", f.path("broken.toml")});
  CHECK(broken.exit_code == 1);
  CHECK(broken.err.find("line 2") != std::string::npos);
}
