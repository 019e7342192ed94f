// Real containers on the simulated GPU host: real runc behind the shim, the injected hooks
// run for real. Needs root.
#include <doctest/doctest.h>

#include <boost/filesystem.hpp>

#include "gpu_fixture.h"

using gcr::Json;
using gcr::test::GpuFixture;

TEST_CASE("a container sees exactly its GPU, the control nodes, its libraries and binaries") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  GpuFixture f;
  f.use_real_runc();
  const auto r = f.run_busybox(
      {"NVIDIA_VISIBLE_DEVICES=1"},
      "ls /dev | grep nvidia | tr '\\n' ' '; echo; stat -c '%t:%T' /dev/nvidia0; "
      "ls /usr/lib/x86_64-linux-gnu | grep -c 'libnvidia-encode\\|libGLX'; nvidia-smi; /probe");
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(r.out ==
        "nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl \nc3:0\n0\n"
        "NVIDIA-SMI (simulated)   Driver Version: " +
            gcr::test::SimHost::version() +
            "\nGPU device /dev/nvidia0\ncuDriverGetVersion: 12040\n");
}

TEST_CASE("a container gets exactly the IMEX channels it names and the GDS devices it enables") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  GpuFixture f;
  f.use_real_runc();
  const auto r = f.run_busybox(
      {"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=1", "NVIDIA_GDS=enabled"},
      "ls /dev/nvidia-caps-imex-channels; "
      "stat -c '%t:%T' /dev/nvidia-caps-imex-channels/channel1; ls /dev | grep nvidia-fs; "
      "cat /etc/cufile.json");
  CHECK(r.err == "");
  CHECK(r.out == "channel1\n1fe:1\nnvidia-fs0\nnvidia-fs1\n{}\n");
}

TEST_CASE("a graphics container gets its GPU's DRM nodes and the Vulkan and EGL files") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  GpuFixture f;
  f.use_real_runc();
  const auto r = f.run_busybox({"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=graphics"},
                               "ls /dev/dri | tr '\\n' ' '; cat /etc/vulkan/icd.d/nvidia_icd.json "
                               "/usr/share/glvnd/egl_vendor.d/10_nvidia.json");
  CHECK(r.err == "");
  CHECK(r.out == "card1 renderD128 {\"icd\": \"etc\"}\n{\"egl\": 1}\n");
}

TEST_CASE("libraries outside the image's search path are found through the ld.so.cache hook") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  gcr::test::SimHostOptions lib64;
  lib64.layout = gcr::test::LibLayout::kLib64Cache;
  GpuFixture f(lib64);
  f.use_real_runc();
  // Without a loader cache in the image the shim leaves the links and the cache to our
  // createContainer hook, which runc runs.
  REQUIRE(boost::filesystem::remove(f.bundle() + "/rootfs/etc/ld.so.cache"));
  const auto r =
      f.run_busybox({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"},
                    "/probe; readlink /usr/lib64/libcuda.so; cat "
                    "/etc/ld.so.conf.d/00-gpu-container-runtime.conf");
  CHECK(r.err == "");
  CHECK(f.hook_names() ==
        std::vector<std::string>{"update-libraries", "disable-device-node-modification"});
  CHECK(r.out ==
        "cuDriverGetVersion: 12040\nlibcuda.so.1\n"
        "# Written by gpu-container-runtime: driver libraries injected into this "
        "container.\n/usr/lib64\n");
  const auto cache =
      gcr::test::run({"/sbin/ldconfig", "-p", "-C", f.bundle() + "/rootfs/etc/ld.so.cache"});
  CHECK(cache.out.find("libcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1") !=
        std::string::npos);
  CHECK(cache.out.find("libc.so.6 (libc6,x86-64) => /lib/x86_64-linux-gnu/libc.so.6") !=
        std::string::npos);
}

TEST_CASE("a driver at /usr/local/nvidia: its libraries and its nvidia-smi, not the wrapper") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  gcr::test::SimHostOptions options;
  options.layout = gcr::test::LibLayout::kUsrLocalNvidia;
  GpuFixture f(options);
  f.use_real_runc();
  // The host's nvidia-smi here is the dlopen probe: it runs only if the program, not the
  // script in /usr/bin that execs it, was injected, and finds libcuda through the loader.
  const auto r =
      f.run_busybox({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"},
                    "/probe; nvidia-smi; readlink /usr/local/nvidia/lib64/libcuda.so.1");
  CHECK(r.err == "");
  CHECK(r.out == "cuDriverGetVersion: 12040\ncuDriverGetVersion: 12040\nlibcuda.so." +
                     gcr::test::SimHost::version() + "\n");
}

TEST_CASE("a request that cannot be met fails `run` with our line and leaves the bundle intact") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  GpuFixture f;
  f.use_real_runc();
  const auto r = f.run_busybox({"NVIDIA_VISIBLE_DEVICES=9"}, "echo should not run");
  CHECK(r.exit_code == 1);
  CHECK(r.out == "");
  CHECK(r.err ==
        "gpu-container-runtime: cannot give the container its GPUs: NVIDIA_VISIBLE_DEVICES: "
        "unknown GPU `9`: "
        "this host has GPUs 0-3\n");
}
