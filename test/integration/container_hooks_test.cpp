// Hooks in real containers: the NVIDIAScape image, docker --gpus' prestart hook under plain
// runc and through the shim. Needs root.
#include <doctest/doctest.h>

#include <boost/filesystem.hpp>

#include "gpu_fixture.h"

using gcr::Json;
using gcr::test::GpuFixture;

namespace {

// The NVIDIAScape image: LD_PRELOAD pointing into the rootfs through /proc/self/cwd.
Json nvidiascape_spec(const GpuFixture& f, const std::string& marker) {
  gcr::test::make_glibc_rootfs(f.bundle());
  boost::filesystem::copy_file(gcr::test::built("poc.so"), f.bundle() + "/rootfs/poc.so",
                               boost::filesystem::copy_options::overwrite_existing);
  Json spec = gcr::test::busybox_spec({"/bin/sh", "-c", "true"});
  spec["process"]["env"].push_back("LD_PRELOAD=/proc/self/cwd/poc.so");
  spec["process"]["env"].push_back("POC_MARKER=" + marker);
  return spec;
}

gcr::test::ProcessResult runc_run(const GpuFixture& f, const std::string& runc, const Json& spec) {
  f.write_spec(spec.dump(2));
  return gcr::test::run(
      {runc, "--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-hook-test"});
}

}  // namespace

TEST_CASE("NVIDIAScape: an image's LD_PRELOAD reaches a hook without env, never ours") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  const std::string runc = gcr::test::runc_path();
  GpuFixture control;
  const std::string control_marker = control.path("control-owned");
  Json spec = nvidiascape_spec(control, control_marker);
  spec["hooks"]["createContainer"] = Json::array({{{"path", "/bin/true"}, {"args", {"true"}}}});
  (void)runc_run(control, runc, spec);
  CHECK_MESSAGE(gcr::test::exists(control_marker),
                "the payload did not fire for a hook without env: this runc does not pass the "
                "container env to hooks");

  GpuFixture ours;
  ours.configure({{"runtime", {{"runtimes", {runc}}}}});
  const std::string marker = ours.path("ours-owned");
  Json gpu = nvidiascape_spec(ours, marker);
  // Without a loader cache in the image the shim leaves the work to our hook, which runc runs.
  boost::filesystem::remove(ours.bundle() + "/rootfs/etc/ld.so.cache");
  gpu["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
  ours.write_spec(gpu.dump(2));
  const auto r =
      ours.shim({"--root", ours.path("runc-root"), "run", "--bundle", ours.bundle(), "gcr-scape"});
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(ours.hook_names() ==
        std::vector<std::string>{"update-libraries", "disable-device-node-modification"});
  CHECK_FALSE(gcr::test::exists(marker));
  // Our hook ran, untouched by the payload: the loader cache it wrote holds the libraries.
  const auto cache =
      gcr::test::run({"/sbin/ldconfig", "-p", "-C", ours.bundle() + "/rootfs/etc/ld.so.cache"});
  CHECK_MESSAGE(
      cache.out.find("libcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1") !=
          std::string::npos,
      "the container's loader cache: " << cache.out << cache.err);
}

TEST_CASE("NVIDIAScape through CDI: a spec's hook without env still runs with an explicit one") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  const std::string runc = gcr::test::runc_path();
  GpuFixture f;
  gcr::test::make_dirs(f.path("cdi"));
  gcr::test::write_file(
      f.path("cdi/hook.json"),
      R"({"cdiVersion":"0.5.0","kind":"example.com/dev","devices":[{"name":"a","containerEdits":{"hooks":[{"hookName":"createContainer","path":"/bin/true","args":["true"]}]}}]})");
  f.configure({{"runtime", {{"runtimes", {runc}}}}, {"cdi", {{"spec-dirs", {f.path("cdi")}}}}});
  const std::string marker = f.path("cdi-owned");
  Json spec = nvidiascape_spec(f, marker);
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=example.com/dev=a");
  f.write_spec(spec.dump(2));
  const auto r =
      f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-cdi-scape"});
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  const Json hook = f.spec()["hooks"]["createContainer"].at(0);
  CHECK(hook["path"] == "/bin/true");
  CHECK(hook["env"] == Json{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"});
  CHECK_FALSE(gcr::test::exists(marker));
}

TEST_CASE("docker --gpus' prestart hook: refused under plain runc, replaced by the shim") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
  const std::string runc = gcr::test::runc_path();
  GpuFixture f;
  gcr::test::make_busybox_rootfs(f.bundle());
  const std::string hook = f.path("bin/nvidia-container-runtime-hook");
  gcr::test::make_symlink(gcr::test::built("gpu-ctk"), hook);
  const auto docker_spec = [&](const std::string& devices) {
    Json spec = gcr::test::busybox_spec({"/bin/sh", "-c", "ls /dev | grep nvidia | tr '\\n' ' '"});
    spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=" + devices);
    spec["process"]["env"].push_back("NVIDIA_DRIVER_CAPABILITIES=utility");
    spec["hooks"]["prestart"] =
        Json::array({{{"path", hook}, {"args", {"nvidia-container-runtime-hook", "prestart"}}}});
    return spec;
  };
  auto plain = runc_run(f, runc, docker_spec("1"));
  CHECK(plain.exit_code != 0);
  CHECK(plain.out == "");
  CHECK(plain.err.find("this container asks for GPUs but was started by plain runc: make "
                       "gpu-container-runtime the engine's runtime") != std::string::npos);

  CHECK(runc_run(f, runc, docker_spec("void")).exit_code == 0);
  // With the flags of NVIDIA's hook, as hooks.d wrappers pass them, before the stage.
  Json flagged = docker_spec("void");
  flagged["hooks"]["prestart"][0]["args"] = {"nvidia-container-runtime-hook",
                                             "-config=/etc/nvidia-container-runtime/config.toml",
                                             "-debug", "prestart"};
  CHECK(runc_run(f, runc, flagged).exit_code == 0);

  f.configure({{"runtime", {{"runtimes", {runc}}}}});
  f.write_spec(docker_spec("1").dump(2));
  const auto shimmed =
      f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-gpus"});
  CHECK(shimmed.err == "");
  CHECK(shimmed.out == "nvidia0 nvidiactl ");
  CHECK(f.spec()["hooks"]["prestart"].empty());
}
