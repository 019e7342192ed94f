// CUDA forward compatibility in real containers (real runc behind the shim): an image holding
// NVIDIA's real libcuda 535.261.03 (Debian's packages, test/real-driver.sh) in
// /usr/local/cuda/compat, on simulated hosts whose driver is older (470.57.02: the stub there
// answers cuDriverGetVersion 11040) or newer (550.54.15: 12040). The probe dlopens libcuda.so.1
// through the container's own loader cache: the real 535 library answers 12020 without a GPU.
// A stub compat library with NVIDIA's note (575.57.08, 12090) checks the note's rule. Needs
// root. CDI specs carry the same as gpu-ctk hook enable-cuda-compat (also under NVIDIA's
// nvidia-cdi-hook name).
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>

#include "cdi_fixture.h"
#include "real_driver.h"

using gcr::Json;
using gcr::test::GpuFixture;

namespace {

constexpr const char* kOldHost = "470.57.02";  // the stub driver root's decoy libcuda
using gcr::test::kDropIn;
using gcr::test::kStubs;

std::string real_libcuda() {
  return gcr::test::real_driver_layouts() + "/flat/usr/lib/x86_64-linux-gnu/libcuda.so." +
         gcr::test::real_driver_version();
}

gcr::test::SimHostOptions host_at(const std::string& version) {
  gcr::test::SimHostOptions options;
  options.driver_version = version;
  return options;
}

void copy(const std::string& from, const std::string& to) {
  gcr::test::make_dirs(to.substr(0, to.rfind('/')));
  if (gcr::test::run({"/bin/cp", "-L", from, to}).exit_code != 0)
    throw std::runtime_error("cannot copy " + from);
}

// The glibc rootfs with what the real libcuda needs, on a host running real runc.
void real_runc_for_libcuda(const GpuFixture& f, const Json& extra = Json::object()) {
  Json config{{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}};
  config.merge_patch(extra);
  f.configure(config);
  gcr::test::make_glibc_rootfs(f.bundle());
  const std::string lib = f.bundle() + "/rootfs/lib/x86_64-linux-gnu/";
  for (const char* name : {"libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1"})
    copy(std::string("/lib/x86_64-linux-gnu/") + name, lib + name);
  if (gcr::test::run({"/sbin/ldconfig", "-r", f.bundle() + "/rootfs"}).exit_code != 0)
    throw std::runtime_error("ldconfig -r");
}

// The compat folder as NVIDIA's cuda-compat package installs it: the library, its soname link
// and its development link.
void install_compat(const GpuFixture& f, const std::string& library,
                    const std::string& folder = "/usr/local/cuda/compat") {
  const std::string dir = f.bundle() + "/rootfs" + folder;
  const std::string name = library.substr(library.rfind('/') + 1);
  copy(library, dir + "/" + name);
  gcr::test::make_symlink(name, dir + "/libcuda.so.1");
  gcr::test::make_symlink("libcuda.so.1", dir + "/libcuda.so");
}

gcr::test::ProcessResult run_probe(const GpuFixture& f, const std::string& script = "/probe") {
  Json spec = gcr::test::busybox_spec({"/bin/sh", "-c", script});
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
  f.write_spec(spec.dump(2));
  return f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-compat"});
}

// Where the container's loader cache says libcuda.so.1 is (its first entry).
std::string cached_libcuda(const GpuFixture& f) {
  const auto cache =
      gcr::test::run({"/sbin/ldconfig", "-p", "-C", f.bundle() + "/rootfs/etc/ld.so.cache"});
  const auto at = cache.out.find("libcuda.so.1 (libc6,x86-64) => ");
  if (at == std::string::npos) return "";
  const auto start = cache.out.find("=> ", at) + 3;
  return cache.out.substr(start, cache.out.find('\n', start) - start);
}

// gpu-ctk with the fixture's configuration.
gcr::test::ProcessResult ctk_of(const GpuFixture& f, std::vector<std::string> args) {
  args.insert(args.begin(), gcr::test::built("gpu-ctk"));
  gcr::test::RunOptions options;
  options.env["GPU_CONTAINER_RUNTIME_CONFIG"] = f.config_path();
  return gcr::test::run(args, options);
}

// A CDI spec as NVIDIA's nvidia-ctk writes one for the old host's GPU 0: its nodes, its libcuda,
// and NVIDIA's hooks run as nvidia-cdi-hook (our gpu-ctk under that name).
Json nvidia_style_spec(const GpuFixture& f, const std::string& cdi_hook,
                       const std::string& host_flag = std::string("--host-driver-version=") +
                                                      kOldHost) {
  const std::string lib = "/usr/lib/x86_64-linux-gnu";
  const std::string libcuda = "libcuda.so." + std::string(kOldHost);
  const auto hook = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "nvidia-cdi-hook");
    return Json{{"hookName", "createContainer"}, {"path", cdi_hook}, {"args", args}};
  };
  Json nodes = Json::array();
  for (const char* node : {"/dev/nvidia1", "/dev/nvidiactl"})
    nodes.push_back({{"path", node}, {"hostPath", f.host().dev_root() + node}});
  return {{"cdiVersion", "0.5.0"},
          {"kind", "nvidia.com/gpu"},
          {"devices", {{{"name", "0"}, {"containerEdits", {{"deviceNodes", nodes}}}}}},
          {"containerEdits",
           {{"mounts",
             {{{"hostPath", f.host().driver_root() + lib + "/" + libcuda},
               {"containerPath", lib + "/" + libcuda},
               {"options", {"ro", "nosuid", "nodev", "bind"}}}}},
            {"hooks",
             {hook({"enable-cuda-compat", host_flag}),
              hook({"create-symlinks", "--link", libcuda + "::" + lib + "/libcuda.so.1"}),
              hook({"update-ldcache", "--ldconfig-path", "/sbin/ldconfig", "--folder", lib})}}}}};
}

}  // namespace

TEST_SUITE("cuda compat") {
  TEST_CASE("an older host driver: the image's compat libcuda is loaded, first in the cache") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f(host_at(kOldHost));
    real_runc_for_libcuda(f);
    install_compat(f, real_libcuda());
    const auto r = run_probe(f, std::string("/probe; cat ") + kDropIn);
    CHECK(r.err == "");
    CHECK(r.exit_code == 0);
    CHECK(r.out ==
          "cuDriverGetVersion: 12020\n"
          "# Written by gpu-container-runtime: driver libraries injected into this container.\n"
          "/usr/local/cuda/compat\n");
    CHECK(cached_libcuda(f) == "/usr/local/cuda/compat/libcuda.so.1");
  }

  TEST_CASE("without the feature, the same image on the same host loads the host's libcuda") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f(host_at(kOldHost));
    real_runc_for_libcuda(f, {{"requests", {{"cuda-compat-dir", ""}}}});
    install_compat(f, real_libcuda());
    const auto r = run_probe(f);
    CHECK(r.err == "");
    CHECK(r.out == "cuDriverGetVersion: 11040\n");
    CHECK(cached_libcuda(f) == "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  }

  TEST_CASE("a newer host driver: nothing changes, the host's libcuda is loaded") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f;  // 550.54.15
    real_runc_for_libcuda(f);
    install_compat(f, real_libcuda());
    const auto r = run_probe(f, std::string("/probe; cat ") + kDropIn + " 2>&1 | grep -c compat");
    CHECK(r.err == "");
    CHECK(r.out == "cuDriverGetVersion: 12040\n0\n");
    CHECK(cached_libcuda(f) == "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  }

  // A driver that leaves device nodes alone needs no device-node hook, and an image whose compat
  // libcuda is older than the host's needs nothing of it: the loader cache is written at create
  // and the spec holds no hook at all (the compat check must not leave a hook list behind).
  TEST_CASE("a newer host driver that modifies no device nodes: nothing changes, and no hook") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f;  // 550.54.15
    gcr::test::write_file(f.host().dev_root() + "/proc/driver/nvidia/params",
                          "ModifyDeviceFiles: 0\nDeviceFileUID: 0\nDeviceFileGID: 0\n"
                          "DeviceFileMode: 438\n");
    real_runc_for_libcuda(f);
    install_compat(f, real_libcuda());
    const auto r = run_probe(f);
    CHECK(r.err == "");
    CHECK(r.out == "cuDriverGetVersion: 12040\n");
    CHECK(cached_libcuda(f) == "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
    const Json written = Json::parse(gcr::test::read_file(f.bundle() + "/config.json"));
    CHECK_MESSAGE(!written.contains("hooks"), written.value("hooks", Json()).dump());
  }

  TEST_CASE("a compat folder reached through a symlink is named as resolved in the image") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f(host_at(kOldHost));
    real_runc_for_libcuda(f);
    install_compat(f, real_libcuda(), "/usr/local/cuda-12.2/compat");
    gcr::test::make_symlink("cuda-12.2", f.bundle() + "/rootfs/usr/local/cuda");
    const auto r = run_probe(f);
    CHECK(r.err == "");
    CHECK(r.out == "cuDriverGetVersion: 12020\n");
    CHECK(cached_libcuda(f) == "/usr/local/cuda-12.2/compat/libcuda.so.1");
  }

  TEST_CASE("NVIDIA's note decides: the host's branch must be one the library runs on") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    const std::string noted = kStubs + "/compat/libcuda.so.575.57.08";
    GpuFixture newer_branch;  // 550, listed in the note; 575.57.08 is newer
    real_runc_for_libcuda(newer_branch);
    install_compat(newer_branch, noted);
    CHECK(run_probe(newer_branch).out == "cuDriverGetVersion: 12090\n");
    GpuFixture unlisted(host_at(kOldHost));  // 470: a newer major, but not a listed branch
    real_runc_for_libcuda(unlisted);
    install_compat(unlisted, noted);
    CHECK(run_probe(unlisted).out == "cuDriverGetVersion: 11040\n");
  }

  TEST_CASE("hostile compat folders: the container starts with the host's libcuda") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f(host_at(kOldHost));
    real_runc_for_libcuda(f, {{"runtime", {{"log-file", f.path("shim.log")}}}});
    const std::string compat = f.bundle() + "/rootfs/usr/local/cuda/compat";
    const gcr::test::TempDir host;
    SUBCASE("two libraries") {
      install_compat(f, real_libcuda());
      copy(real_libcuda(), compat + "/libcuda.so.545.23.08");
    }
    SUBCASE("a folder that is a symlink out of the rootfs, to a host folder with the library") {
      copy(real_libcuda(), host / "compat/libcuda.so.535.261.03");
      gcr::test::make_dirs(f.bundle() + "/rootfs/usr/local/cuda");
      gcr::test::make_symlink(host / "compat", compat);
    }
    SUBCASE("a huge file of garbage named libcuda.so.999.1") {
      const std::string huge = compat + "/libcuda.so.999.1";
      gcr::test::write_file(huge, std::string(4096, 'x'));
      REQUIRE(::truncate(huge.c_str(), off_t{16} << 30) == 0);  // 16 GiB, sparse
    }
    const auto start = std::chrono::steady_clock::now();
    const auto r = run_probe(f);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    CHECK(r.err == "");
    CHECK(r.out == "cuDriverGetVersion: 11040\n");
    CHECK(cached_libcuda(f) == "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  }

  TEST_CASE("gpu-ctk cdi generate: the spec's enable-cuda-compat hook, done at create") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f(host_at(kOldHost));
    real_runc_for_libcuda(f, {{"cdi", {{"spec-dirs", {f.path("cdi")}}}}});
    install_compat(f, real_libcuda());
    // The stub NVML is not the simulated 470 driver's: without it generate cannot name MIG
    // devices, so this host has none.
    f.host().remove_mig_instances();
    const auto generated = ctk_of(f, {"cdi", "generate", "--output", f.path("cdi/nvidia.json")});
    REQUIRE_MESSAGE(generated.exit_code == 0, generated.err);
    const Json hooks = Json::parse(gcr::test::read_file(f.path("cdi/nvidia.json")))
                           .at("containerEdits")
                           .at("hooks");
    REQUIRE(hooks.size() == 4);
    CHECK(hooks[0]["args"] ==
          Json::array({"gpu-ctk", "hook", "enable-cuda-compat", "--host-driver-version", kOldHost,
                       "--cuda-compat-container-root", "/usr/local/cuda/compat"}));
    CHECK(hooks[1]["args"][2] == "update-libraries");
    CHECK(hooks[3]["args"][2] == "update-application-profile");
    Json spec = gcr::test::busybox_spec({"/bin/sh", "-c", "/probe"});
    spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0");
    f.write_spec(spec.dump(2));
    const auto r =
        f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-compat-cdi"});
    CHECK(r.err == "");
    CHECK(r.out == "cuDriverGetVersion: 12020\n");
    // Decided at create: the hook is gone, the update-libraries hook has the folder first. The
    // application profile is written at create too.
    CHECK(f.hook_names() ==
          std::vector<std::string>{"update-libraries", "disable-device-node-modification"});
    const Json libraries = f.spec()["hooks"]["createContainer"][0]["args"];
    CHECK(libraries[5] == "--folder");
    CHECK(libraries[6] == "/usr/local/cuda/compat");
  }

  TEST_CASE("NVIDIA's CDI hooks, run as nvidia-cdi-hook in the container: the compat libcuda") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f(host_at(kOldHost));
    real_runc_for_libcuda(f, {{"cdi", {{"spec-dirs", {f.path("cdi")}}}}});
    install_compat(f, real_libcuda());
    const std::string cdi_hook = f.path("bin/nvidia-cdi-hook");
    gcr::test::make_dirs(f.path("bin"));
    gcr::test::make_symlink(gcr::test::built("gpu-ctk"), cdi_hook);
    gcr::test::write_file(f.path("cdi/nvidia.json"), nvidia_style_spec(f, cdi_hook).dump(2));
    Json spec = gcr::test::busybox_spec(
        {"/bin/sh", "-c", "/probe; cat /etc/ld.so.conf.d/00-compat-gpu-container-runtime.conf"});
    spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0");
    f.write_spec(spec.dump(2));
    const auto r =
        f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-compat-nv"});
    CHECK(r.err == "");
    CHECK(r.out ==
          "cuDriverGetVersion: 12020\n"
          "# Written by gpu-container-runtime: CUDA forward-compatibility libraries, loaded "
          "first.\n/usr/local/cuda/compat\n");
    CHECK(cached_libcuda(f) == "/usr/local/cuda/compat/libcuda.so.1");
    CHECK(f.spec()["hooks"]["createContainer"].size() == 3);  // NVIDIA's, run by runc
  }

  // NVIDIA's specs leave out --host-driver-version where the driver's has a `*`: the note's CUDA
  // version against the host's decides (it did nothing).
  TEST_CASE("enable-cuda-compat with the host's CUDA version alone: the note decides") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    GpuFixture f(host_at(kOldHost));
    real_runc_for_libcuda(f, {{"cdi", {{"spec-dirs", {f.path("cdi")}}}}});
    install_compat(f, kStubs + "/compat/libcuda.so.575.57.08");  // CUDA 12.9 in its note
    const std::string cdi_hook = f.path("bin/nvidia-cdi-hook");
    gcr::test::make_dirs(f.path("bin"));
    gcr::test::make_symlink(gcr::test::built("gpu-ctk"), cdi_hook);
    gcr::test::write_file(f.path("cdi/nvidia.json"),
                          nvidia_style_spec(f, cdi_hook, "--host-cuda-version=12.2").dump(2));
    Json spec = gcr::test::busybox_spec({"/probe"});
    spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0");
    f.write_spec(spec.dump(2));
    const auto r =
        f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-compat-cuda"});
    CHECK(r.err == "");
    CHECK(r.out == "cuDriverGetVersion: 12090\n");
  }
}
