// GPU injection against a simulated host, with the recording fake runc: which devices,
// files, hooks and errors a request produces. Needs root (the host has real device nodes).
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <regex>

#include "gpu_fixture.h"

using gcr::Json;
using gcr::test::GpuFixture;
using NodeNumbers = std::map<std::string, std::string>;

namespace {

using gcr::test::contains;
using gcr::test::kLib;
using gcr::test::require_root;
const std::string kLib32 = "/usr/lib/i386-linux-gnu/";
using gcr::test::kDropIn;
using gcr::test::kVersion;

}  // namespace

TEST_CASE("one GPU by index: its node (index != minor), control nodes, compute+utility files") {
  require_root();
  GpuFixture f;
  // A host with IMEX (multi-node NVLink): its daemon and control program come with utility.
  for (const char* bin : {"nvidia-imex", "nvidia-imex-ctl"})
    gcr::test::write_file(f.host().driver_root() + "/usr/bin/" + bin, "#!/bin/sh\nexit 0\n", 0755);
  const auto result = f.create({"NVIDIA_VISIBLE_DEVICES=1"});
  REQUIRE(result.err == "");
  REQUIRE(result.exit_code == 0);
  CHECK(f.devices() == NodeNumbers{{"/dev/nvidia0", "195:0"},
                                   {"/dev/nvidiactl", "195:255"},
                                   {"/dev/nvidia-uvm", "508:0"},
                                   {"/dev/nvidia-uvm-tools", "508:1"}});
  const Json rules = f.spec()["linux"]["resources"]["devices"];
  CHECK(rules.at(0) == Json::parse(R"({"allow":false,"access":"rwm"})"));
  CHECK(std::count(
            rules.begin(), rules.end(),
            Json::parse(R"({"allow":true,"type":"c","major":195,"minor":0,"access":"rwm"})")) == 1);
  CHECK(rules.size() == 5);
  const auto mounts = f.mount_destinations();
  for (const char* lib :
       {"libcuda.so.", "libnvidia-ml.so.", "libnvidia-cfg.so.", "libnvidia-ptxjitcompiler.so.",
        "libnvidia-opencl.so.", "libnvidia-nvvm.so.", "libnvidia-allocator.so."}) {
    CHECK_MESSAGE(contains(mounts, kLib + lib + kVersion), lib);
  }
  for (const char* lib : {"libnvidia-encode.so.", "libGLX_nvidia.so.", "libnvidia-glcore.so.",
                          "libnvidia-ngx.so.", "libnvidia-gtk3.so."}) {
    CHECK_MESSAGE(!contains(mounts, kLib + lib + kVersion), lib);
  }
  CHECK_FALSE(contains(mounts, kLib32 + "libcuda.so." + kVersion));
  CHECK_FALSE(contains(mounts, kLib + "libcuda.so.470.57.02"));
  for (const char* bin :
       {"/usr/bin/nvidia-smi", "/usr/bin/nvidia-debugdump", "/usr/bin/nvidia-persistenced",
        "/usr/bin/nvidia-cuda-mps-control", "/usr/bin/nvidia-cuda-mps-server",
        "/usr/bin/nvidia-imex", "/usr/bin/nvidia-imex-ctl"}) {
    CHECK_MESSAGE(contains(mounts, bin), bin);
  }
  CHECK_FALSE(contains(mounts, "/usr/bin/nvidia-settings"));
  CHECK(contains(mounts, "/lib/firmware/nvidia/" + kVersion + "/gsp_ga10x.bin"));
  const Json lib = f.mount_at(kLib + "libcuda.so." + kVersion);
  CHECK(lib["source"] == f.host().driver_root() + kLib + "libcuda.so." + kVersion);
  CHECK(lib["options"] == Json({"ro", "nosuid", "nodev", "rbind", "rprivate"}));
  CHECK(lib["type"] == "bind");
  const Json socket = f.mount_at("/run/nvidia-persistenced/socket");
  CHECK(socket["options"] == Json({"nosuid", "nodev", "rbind", "rprivate", "noexec"}));
}

TEST_CASE("the injected hooks: createContainer, explicit env, timeout, our gpu-ctk") {
  require_root();
  GpuFixture f;
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0", "LD_PRELOAD=/proc/self/cwd/poc.so"}).exit_code ==
          0);
  const Json hooks = f.spec()["hooks"]["createContainer"];
  REQUIRE(hooks.size() == 2);
  CHECK(hooks[0]["args"] == Json({"gpu-ctk", "hook", "update-libraries", "--ldconfig-path",
                                  "@/sbin/ldconfig", "--folder", "/usr/lib/x86_64-linux-gnu",
                                  "--link", "libcuda.so.1::" + kLib + "libcuda.so"}));
  // The host's driver lets its libraries make device nodes; the container's view must not.
  CHECK(hooks[1]["args"] == Json({"gpu-ctk", "hook", "disable-device-node-modification"}));
  for (const auto& hook : hooks) {
    CHECK(hook["path"] == gcr::test::built("gpu-ctk"));
    CHECK(hook["timeout"] == 30);
    REQUIRE(hook["env"].is_array());
    CHECK_FALSE(hook["env"].empty());
    for (const auto& e : hook["env"]) CHECK(e.get<std::string>().rfind("LD_", 0) != 0);
  }
}

TEST_CASE("an image with a loader cache gets its links and cache at create, and no library hook") {
  require_root();
  const std::vector<std::string> kParamsOnly{"disable-device-node-modification"};
  const std::vector<std::string> kBoth{"update-libraries", "disable-device-node-modification"};
  GpuFixture f;
  gcr::test::make_glibc_rootfs(f.bundle());
  const std::string rootfs = f.bundle() + "/rootfs";
  const auto listed = [&] {
    return gcr::test::run({"/sbin/ldconfig", "-p", "-C", rootfs + "/etc/ld.so.cache"}).out;
  };
  const std::string cuda = "libcuda.so.1 (libc6,x86-64) => " + kLib + "libcuda.so.1";
  SUBCASE("written by the shim") {
    REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"}).exit_code == 0);
    const Json spec = f.spec();
    CHECK(f.hook_names() == kParamsOnly);
    CHECK(spec["mounts"].size() > 5);
    CHECK(listed().find(cuda) != std::string::npos);
    CHECK(boost::filesystem::read_symlink(rootfs + kLib + "libcuda.so.1").string() ==
          "libcuda.so." + kVersion);
    CHECK(boost::filesystem::read_symlink(rootfs + kLib + "libcuda.so").string() == "libcuda.so.1");
    // The image's configuration names the folder already: no drop-in, as NVIDIA's hook.
    CHECK_FALSE(gcr::test::exists(rootfs + kDropIn));
  }
  SUBCASE("a folder the image's configuration does not name is declared in the drop-in") {
    REQUIRE(::unlink((rootfs + "/etc/ld.so.conf.d/x86_64-linux-gnu.conf").c_str()) == 0);
    REQUIRE(gcr::test::run({"/sbin/ldconfig", "-r", rootfs}).exit_code == 0);
    REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"}).exit_code == 0);
    CHECK(f.hook_names() == kParamsOnly);
    CHECK(listed().find(cuda) != std::string::npos);
    CHECK(gcr::test::read_file(rootfs + kDropIn) ==
          "# Written by gpu-container-runtime: driver libraries injected into this container.\n" +
              kLib.substr(0, kLib.size() - 1) + "\n");
  }
  SUBCASE("a user namespace: the hook does it as the container's root") {
    REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"},
                     {{"linux", {{"namespaces", {{{"type", "mount"}}, {{"type", "user"}}}}}}})
                .exit_code == 0);
    CHECK(f.hook_names() == kBoth);
    CHECK(listed().find(cuda) == std::string::npos);
  }
  SUBCASE("a volume over the image's configuration: the hook reads it once mounted") {
    f.configure({{"runtime", {{"log-file", f.path("shim.log")}, {"log-level", "debug"}}}});
    REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"}, {{"mounts",
                                                     {{{"destination", "/etc/ld.so.conf.d"},
                                                       {"source", f.path("conf")},
                                                       {"type", "bind"},
                                                       {"options", {"rbind"}}}}}})
                .exit_code == 0);
    CHECK(f.hook_names() == kBoth);
    CHECK(gcr::test::read_file(f.path("shim.log"))
              .find("the loader cache is left to the hook: the mount at /etc/ld.so.conf.d "
                    "changes what ldconfig reads") != std::string::npos);
  }
  SUBCASE("a prestart hook runs before ours and may change what ldconfig reads") {
    REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"},
                     {{"hooks", {{"prestart", {{{"path", "/bin/true"}}}}}}})
                .exit_code == 0);
    CHECK(f.hook_names() == kBoth);
    CHECK(listed().find(cuda) == std::string::npos);
  }
  SUBCASE("a rootfs reached through a symlink, which runc refuses: nothing written through it") {
    const std::string real = f.bundle() + "/real-rootfs";
    const std::string cache = gcr::test::read_file(rootfs + "/etc/ld.so.cache");
    boost::filesystem::rename(rootfs, real);
    gcr::test::make_symlink("real-rootfs", rootfs);
    REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"}).exit_code == 0);
    CHECK(f.hook_names() == kBoth);
    CHECK(gcr::test::read_file(real + "/etc/ld.so.cache") == cache);
    CHECK_FALSE(boost::filesystem::is_symlink(real + kLib + "libcuda.so"));
  }
}

TEST_CASE("at debug level, a GPU create logs the wall and CPU time of each of its steps") {
  require_root();
  GpuFixture f;
  f.configure({{"runtime", {{"log-file", f.path("shim.log")}, {"log-level", "debug"}}}});
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"}).exit_code == 0);
  const std::string step = " [0-9]+\\.[0-9]{3}/[0-9]+\\.[0-9]{3}";
  CHECK(std::regex_search(gcr::test::read_file(f.path("shim.log")),
                          std::regex("create steps: configuration" + step + ", request" + step +
                                     ", discovery" + step + ", edits" + step + ", loader cache" +
                                     step + ", write" + step + " \\(ms wall/CPU\\)")));
#ifdef GCR_TEST_SHIM_HEAP
  // The create took its small blocks from the shim's own heap (runtime/shim/heap.h).
  CHECK(std::regex_search(
      gcr::test::read_file(f.path("shim.log")),
      std::regex("small blocks from the create's heap: [1-9][0-9]* of 256 slabs of 1 KiB")));
#endif
}

TEST_CASE("all GPUs, by UUID, by PCI bus id") {
  require_root();
  GpuFixture f;
  REQUIRE(
      f.create({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=utility"}).exit_code ==
      0);
  // GPU 1 (minor 0) is in MIG mode: `all` brings every MIG instance's access capabilities.
  CHECK(f.devices() == NodeNumbers{{"/dev/nvidia0", "195:0"},
                                   {"/dev/nvidia1", "195:1"},
                                   {"/dev/nvidia3", "195:3"},
                                   {"/dev/nvidia4", "195:4"},
                                   {"/dev/nvidiactl", "195:255"},
                                   {"/dev/nvidia-caps/nvidia-cap12", "509:12"},
                                   {"/dev/nvidia-caps/nvidia-cap13", "509:13"},
                                   {"/dev/nvidia-caps/nvidia-cap21", "509:21"},
                                   {"/dev/nvidia-caps/nvidia-cap22", "509:22"}});
  const auto& gpus = f.host().gpus();
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=" + gpus[2].uuid + "," + gpus[3].bus}).exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia4") == 1);
  CHECK(f.devices().count("/dev/nvidia1") == 1);
  CHECK(f.devices().count("/dev/nvidia3") == 0);
}

TEST_CASE("Docker Swarm's generic resource names the GPUs with [requests] swarm-resource") {
  require_root();
  GpuFixture f;
  f.configure({{"requests", {{"swarm-resource", {"DOCKER_RESOURCE_GPU"}}}}});
  const auto& gpus = f.host().gpus();
  // Swarm's variable, not the image's NVIDIA_VISIBLE_DEVICES=all.
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_DRIVER_CAPABILITIES=utility",
                    "DOCKER_RESOURCE_GPU=" + gpus[2].uuid})
              .err == "");
  CHECK(f.devices() == NodeNumbers{{"/dev/nvidia4", "195:4"}, {"/dev/nvidiactl", "195:255"}});
  const auto unknown = f.create({"DOCKER_RESOURCE_GPU=GPU-nope"});
  CAPTURE(unknown.err);
  CHECK(unknown.exit_code == 1);
  CHECK(unknown.err.find("DOCKER_RESOURCE_GPU") != std::string::npos);
  CHECK(unknown.err.find("GPU-nope") != std::string::npos);
}

TEST_CASE("none: driver files and control nodes, no GPU") {
  require_root();
  GpuFixture f;
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=none"}).exit_code == 0);
  CHECK(f.devices() == NodeNumbers{{"/dev/nvidiactl", "195:255"},
                                   {"/dev/nvidia-uvm", "508:0"},
                                   {"/dev/nvidia-uvm-tools", "508:1"}});
  CHECK(contains(f.mount_destinations(), kLib + "libcuda.so." + kVersion));
}

TEST_CASE("a driver only in /usr/local/nvidia: its programs, with no wrapper in /usr/bin") {
  require_root();
  gcr::test::SimHostOptions options;
  options.layout = gcr::test::LibLayout::kUsrLocalNvidia;
  GpuFixture f(options);
  const std::string root = f.host().driver_root();
  REQUIRE(::unlink((root + "/usr/bin/nvidia-smi").c_str()) == 0);
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"}).exit_code == 0);
  const Json smi = f.mount_at("/usr/bin/nvidia-smi");
  REQUIRE(smi.is_object());
  CHECK(smi["source"] == root + "/usr/local/nvidia/bin/nvidia-smi");
}

TEST_CASE("capabilities choose the files: all, video, graphics+display, compat32") {
  require_root();
  GpuFixture f;
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=all"}).exit_code == 0);
  auto mounts = f.mount_destinations();
  for (const char* lib : {"libcuda.so.", "libnvidia-encode.so.", "libnvcuvid.so.",
                          "libGLX_nvidia.so.", "libEGL_nvidia.so.", "libnvidia-glcore.so.",
                          "libnvidia-tls.so.", "libnvidia-ngx.so.", "vdpau/libvdpau_nvidia.so."}) {
    CHECK_MESSAGE(contains(mounts, kLib + lib + kVersion), lib);
  }
  CHECK(contains(mounts, kLib32 + "libcuda.so." + kVersion));
  CHECK(contains(mounts, kLib32 + "libGLX_nvidia.so." + kVersion));
  CHECK_FALSE(contains(mounts, kLib + "libnvidia-gtk3.so." + kVersion));
  CHECK(f.devices().count("/dev/nvidia-modeset") == 1);
  const auto links = f.spec()["hooks"]["createContainer"][0]["args"];
  CHECK(std::find(links.begin(), links.end(),
                  "libGLX_nvidia.so." + kVersion + "::" + kLib + "libGLX_indirect.so.0") !=
        links.end());
  // The name libvdpau opens is the driver root's link to the file, mounted once: a link there.
  CHECK_FALSE(contains(mounts, kLib + "vdpau/libvdpau_nvidia.so.1"));
  CHECK(std::find(links.begin(), links.end(),
                  "libvdpau_nvidia.so." + kVersion + "::" + kLib + "vdpau/libvdpau_nvidia.so.1") !=
        links.end());

  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=video"}).exit_code ==
          0);
  mounts = f.mount_destinations();
  CHECK(contains(mounts, kLib + "libnvidia-encode.so." + kVersion));
  CHECK(contains(mounts, kLib + "libcuda.so." + kVersion));
  CHECK_FALSE(contains(mounts, kLib + "libnvidia-ml.so." + kVersion));
  CHECK_FALSE(contains(mounts, "/usr/bin/nvidia-smi"));
  CHECK(f.devices().count("/dev/nvidia-uvm") == 1);
  CHECK(f.devices().count("/dev/nvidia-modeset") == 0);
}

TEST_CASE("an unknown or malformed ID fails create: named, bundle byte-identical, runc not run") {
  require_root();
  GpuFixture f;
  for (const std::string id : {"7", "GPU-00000000-0000-0000-0000-000000000000", "x",
                               "../../dev/sda", "-1", "0x1", "0000:99:00.0"}) {
    CAPTURE(id);
    const std::string spec_text = gcr::test::busybox_spec({"/bin/sh"}).dump();
    Json spec = Json::parse(spec_text);
    spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=ALL," + id);
    f.write_spec(spec.dump());
    const auto result = f.shim({"--log", f.path("log.json"), "--log-format", "json", "create",
                                "--bundle", f.bundle(), "c"});
    CHECK(result.exit_code == 1);
    CHECK(result.err.rfind(
              "gpu-container-runtime: cannot give the container its GPUs: NVIDIA_VISIBLE_DEVICES: ",
              0) == 0);
    CHECK(result.err.find("`" + id + "`") != std::string::npos);
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') == 1);
    CHECK(gcr::test::read_file(f.spec_path()) == spec.dump());
    CHECK(f.record().is_null());
  }
}

// Engines read runc's --log for the reason runc failed; podman parses it as one JSON document.
// A GPU create that went well leaves nothing there, unless runc's --debug asks for more.
TEST_CASE("runc's --log gets warnings and errors: a GPU create that went well writes nothing") {
  require_root();
  GpuFixture f;
  Json spec = gcr::test::busybox_spec({"/bin/sh"});
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
  f.write_spec(spec.dump());
  const auto quiet = f.shim({"--log", f.path("quiet.json"), "--log-format", "json", "create",
                             "--bundle", f.bundle(), "c"});
  REQUIRE_MESSAGE(quiet.exit_code == 0, quiet.err);
  CHECK_FALSE(gcr::test::exists(f.path("quiet.json")));
  f.write_spec(spec.dump());
  const auto debug = f.shim({"--debug", "--log", f.path("debug.json"), "--log-format", "json",
                             "create", "--bundle", f.bundle(), "c"});
  REQUIRE_MESSAGE(debug.exit_code == 0, debug.err);
  CHECK(gcr::test::read_file(f.path("debug.json")).find("\"level\":\"info\"") != std::string::npos);
}

TEST_CASE("requirements: met, unmet with the host value, per GPU, disabled") {
  require_root();
  GpuFixture f;
  CHECK(f.create({"NVIDIA_VISIBLE_DEVICES=0",
                  "NVIDIA_REQUIRE_CUDA=cuda>=12.0 brand=tesla,driver>=470,driver<471"})
            .exit_code == 0);
  auto r = f.create({"NVIDIA_VISIBLE_DEVICES=0",
                     "NVIDIA_REQUIRE_CUDA=cuda>=12.6 brand=tesla,driver>=470,driver<471"});
  CHECK(r.exit_code == 1);
  CHECK(
      r.err ==
      "gpu-container-runtime: cannot give the container its GPUs: requirement not met: cuda>=12.6 "
      "(NVIDIA_REQUIRE_CUDA; this host has cuda 12.4, driver " +
          kVersion + ")\n");
  CHECK(f.record().is_null());
  r = f.create({"NVIDIA_VISIBLE_DEVICES=0", "CUDA_VERSION=12.8.0"});
  CHECK(r.err.find("requirement not met: cuda>=12.8 (CUDA_VERSION; this host has cuda 12.4)") !=
        std::string::npos);
  r = f.create({"NVIDIA_VISIBLE_DEVICES=0,2", "NVIDIA_REQUIRE_ARCH=arch>=8.0"});
  CHECK(r.err.find("requirement not met: arch>=8.0 (NVIDIA_REQUIRE_ARCH; GPU 2 has arch 7.0)") !=
        std::string::npos);
  r = f.create({"NVIDIA_VISIBLE_DEVICES=3", "NVIDIA_REQUIRE_BRAND=brand=tesla"});
  CHECK(r.err.find("GPU 3 has brand GeForce") != std::string::npos);
  CHECK(f.create({"NVIDIA_VISIBLE_DEVICES=none", "NVIDIA_REQUIRE_DRIVER=driver>=500"}).exit_code ==
        0);
  r = f.create({"NVIDIA_VISIBLE_DEVICES=none", "NVIDIA_REQUIRE_DRIVER=driver<500"});
  CHECK(r.err.find("requirement not met: driver<500 (NVIDIA_REQUIRE_DRIVER; this host has driver " +
                   kVersion + ")") != std::string::npos);
  CHECK(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=99",
                  "NVIDIA_DISABLE_REQUIRE=true"})
            .exit_code == 0);
}

TEST_CASE("no request, void, unprivileged env: the bundle is untouched") {
  require_root();
  GpuFixture f;
  for (const std::vector<std::string>& env :
       {std::vector<std::string>{"PATH=/bin"},
        {"NVIDIA_VISIBLE_DEVICES=void"},
        {"NVIDIA_VISIBLE_DEVICES="},
        {"NVIDIA_VISIBLE_DEVICES=all", "NVIDIA_VISIBLE_DEVICES="}}) {
    CAPTURE(env);
    const std::string before = [&] {
      Json s = gcr::test::busybox_spec({"/bin/sh"});
      s["process"]["env"] = env;
      return s.dump(2);
    }();
    REQUIRE(f.create(env).exit_code == 0);
    CHECK(gcr::test::read_file(f.spec_path()) == before);
  }
  f.configure({{"requests", {{"accept-env-when-unprivileged", false}}}});
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=all"}).exit_code == 0);
  CHECK(f.devices().empty());
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=all"},
                   {{"process", {{"capabilities", {{"bounding", {"CAP_SYS_ADMIN"}}}}}}})
              .exit_code == 0);
  CHECK(f.devices().size() == 11);  // 4 GPUs, nvidiactl, 2 UVM nodes, 4 MIG access caps
}

TEST_CASE("a request is read as runc decodes the spec's strings, escapes and all") {
  require_root();
  GpuFixture f;
  // \u004e is N and \/ is /: the request hides behind escapes, in the variable's name and in
  // an annotation's key. A spec with a megabyte of other annotations is left as it was, and
  // one with a duplicate key is still refused.
  const std::string env_escaped =
      R"({"ociVersion":"1.0.2","process":{"args":["sh"],"env":["\u004eVIDIA_VISIBLE_DEVICES=0"]},)"
      R"("root":{"path":"rootfs"}})";
  f.write_spec(env_escaped);
  REQUIRE(f.shim({"create", "--bundle", f.bundle(), "ctr"}).exit_code == 0);
  CHECK(f.devices().size() == 4);  // the GPU, nvidiactl, 2 UVM nodes
  const std::string annotated =
      R"({"ociVersion":"1.0.2","process":{"args":["sh"]},"root":{"path":"rootfs"},)"
      R"("annotations":{"cdi.k8s.io\/gpu":"nvidia.com/gpu=0"}})";
  f.write_spec(annotated);
  const auto by_annotation = f.shim({"create", "--bundle", f.bundle(), "ctr"});
  CHECK(by_annotation.exit_code == 1);  // no CDI spec for nvidia.com/gpu here: read, and refused
  CHECK(by_annotation.err.find("nvidia.com/gpu=0") != std::string::npos);
  std::string big = R"({"ociVersion":"1.0.2","process":{"args":["sh"]},"annotations":{)";
  for (int i = 0; i < 35000; ++i)
    big += std::string(i ? "," : "") + "\"example.com/k" + std::to_string(i) + "\":\"v\"";
  big += R"(},"root":{"path":"rootfs"}})";
  f.write_spec(big);
  REQUIRE(f.shim({"create", "--bundle", f.bundle(), "ctr"}).exit_code == 0);
  CHECK(gcr::test::read_file(f.spec_path()) == big);
  big.insert(big.size() - 1, R"(,"x":"y","x":1)");  // a spec runc would read differently
  f.write_spec(big);
  const auto duplicate = f.shim({"create", "--bundle", f.bundle(), "ctr"});
  CHECK(duplicate.exit_code == 1);
  CHECK(duplicate.err.find("duplicate key `x`") != std::string::npos);
}

TEST_CASE("volume-mount markers select GPUs when enabled") {
  require_root();
  GpuFixture f;
  f.configure(
      {{"requests", {{"accept-volume-mounts", true}, {"accept-env-when-unprivileged", false}}}});
  const Json marker = {{"mounts",
                        {{{"destination", "/var/run/nvidia-container-devices/2"},
                          {"source", "/dev/null"},
                          {"type", "bind"},
                          {"options", {"bind", "ro"}}}}}};
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=all"}, marker).exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia4") == 1);
  CHECK(f.devices().count("/dev/nvidia0") == 0);
}

TEST_CASE("docker --gpus prestart hook is removed; running twice adds nothing twice") {
  require_root();
  GpuFixture f;
  const Json docker = {{"hooks",
                        {{"prestart",
                          {{{"path", "/usr/bin/nvidia-container-runtime-hook"},
                            {"args", {"nvidia-container-runtime-hook", "prestart"}}},
                           {{"path", "/usr/local/bin/other-hook"}}}}}}};
  REQUIRE(
      f.create({"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=all"}, docker).exit_code ==
      0);
  const Json once = f.spec();
  CHECK(once["hooks"]["prestart"] == Json::parse(R"([{"path":"/usr/local/bin/other-hook"}])"));
  REQUIRE(f.shim({"create", "--bundle", f.bundle(), "ctr"}).exit_code == 0);
  CHECK(f.spec() == once);
}

// runc ignores a hook kind it does not know, whatever it holds; so do we (it was an internal
// error: its entries were read as hooks).
TEST_CASE("a hook kind runc does not know is kept as it is, whatever its entries") {
  require_root();
  GpuFixture f;
  const Json odd = Json::parse(R"([1, "x", {"path": 5}, {"path": "/usr/bin/gpu-ctk"}])");
  const Json spec = {{"hooks", {{"org.example", odd}}}};
  const auto r = f.create({"NVIDIA_VISIBLE_DEVICES=1"}, spec);
  CHECK(r.err == "");
  REQUIRE(r.exit_code == 0);
  CHECK(f.spec()["hooks"]["org.example"] == odd);
  CHECK(f.devices().count("/dev/nvidiactl") == 1);
}

TEST_CASE("a missing driver and a missing GPU node are errors naming what is missing") {
  require_root();
  GpuFixture f;
  REQUIRE(::unlink((f.host().dev_root() + "/dev/nvidia4").c_str()) == 0);
  auto r = f.create({"NVIDIA_VISIBLE_DEVICES=2"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("GPU 2: missing device node: No such file or directory (" + f.host().dev_root() +
                   "/dev/nvidia4)") != std::string::npos);
  REQUIRE(::unlink((f.host().dev_root() + "/proc/driver/nvidia/version").c_str()) == 0);
  r = f.create({"NVIDIA_VISIBLE_DEVICES=0"});
  CHECK(r.err.find("NVIDIA driver not found: No such file or directory (" + f.host().dev_root() +
                   "/proc/driver/nvidia/version)") != std::string::npos);
  CHECK(f.create({"PATH=/bin"}).exit_code == 0);
  // WSL2 (Microsoft's /dev/dxg): said, since there is no driver to load.
  gcr::test::write_file(f.host().dev_root() + "/dev/dxg", "");
  r = f.create({"NVIDIA_VISIBLE_DEVICES=0"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("NVIDIA driver not found: this is WSL2 (" + f.host().dev_root() + "/dev/dxg)") !=
        std::string::npos);
}

TEST_CASE("a device node that is not what it claims is refused") {
  require_root();
  GpuFixture f;
  const std::string node = f.host().dev_root() + "/dev/nvidia0";
  REQUIRE(::unlink(node.c_str()) == 0);
  REQUIRE(::mknod(node.c_str(), S_IFCHR | 0666, makedev(8, 0)) == 0);
  CHECK(f.create({"NVIDIA_VISIBLE_DEVICES=1"}).err.find("device node has major 8, expected 195") !=
        std::string::npos);
  REQUIRE(::unlink(node.c_str()) == 0);
  gcr::test::make_symlink("/dev/null", node);
  CHECK(f.create({"NVIDIA_VISIBLE_DEVICES=1"}).err.find("not a character device") !=
        std::string::npos);
}

TEST_CASE("lib64 layout: libraries found through the driver root's ld.so.cache, decoy skipped") {
  require_root();
  gcr::test::SimHostOptions options;
  options.layout = gcr::test::LibLayout::kLib64Cache;
  GpuFixture f(options);
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=compute,compat32"})
              .exit_code == 0);
  const auto mounts = f.mount_destinations();
  CHECK(contains(mounts, "/usr/lib64/libcuda.so." + kVersion));
  CHECK(contains(mounts, "/usr/lib/libcuda.so." + kVersion));
  CHECK_FALSE(contains(mounts, "/usr/lib64/legacy/libcuda.so.470.57.02"));
  const Json args = f.spec()["hooks"]["createContainer"][0]["args"];
  REQUIRE(args.size() >= 9);
  CHECK(Json(std::vector<Json>(args.begin(), args.begin() + 9)) ==
        Json({"gpu-ctk", "hook", "update-libraries", "--ldconfig-path", "@/sbin/ldconfig",
              "--folder", "/usr/lib64", "--folder", "/usr/lib"}));
}

TEST_CASE("MIG config and monitor caps for privileged containers") {
  require_root();
  GpuFixture f;
  const Json privileged = {{"process", {{"capabilities", {{"bounding", {"CAP_SYS_ADMIN"}}}}}}};
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES=all",
                    "NVIDIA_MIG_MONITOR_DEVICES=all"},
                   privileged)
              .exit_code == 0);
  CHECK(f.devices().at("/dev/nvidia-caps/nvidia-cap1") == "509:1");
  CHECK(f.devices().at("/dev/nvidia-caps/nvidia-cap2") == "509:2");
  CHECK(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_MIG_CONFIG_DEVICES=all"}).exit_code == 1);
  // Not with a MIG device chosen alone, as NVIDIA's: every MIG device of its GPU would come.
  const auto mixed =
      f.create({"NVIDIA_VISIBLE_DEVICES=1:1", "NVIDIA_MIG_MONITOR_DEVICES=all"}, privileged);
  CHECK(mixed.exit_code == 1);
  CHECK(mixed.err.find("the MIG monitor capability cannot be combined with individually selected "
                       "MIG devices") != std::string::npos);
}

TEST_CASE("IMEX channels: their nodes and cgroup rules; a missing or wrong node fails create") {
  require_root();
  GpuFixture f;
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=none", "NVIDIA_IMEX_CHANNELS=1,0"}).err == "");
  CHECK(f.devices().at("/dev/nvidia-caps-imex-channels/channel1") == "510:1");
  CHECK(f.devices().at("/dev/nvidia-caps-imex-channels/channel0") == "510:0");
  const Json rules = f.spec()["linux"]["resources"]["devices"];
  CHECK(std::count(
            rules.begin(), rules.end(),
            Json::parse(R"({"allow":true,"type":"c","major":510,"minor":1,"access":"rwm"})")) == 1);
  GpuFixture g;
  const auto missing = g.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=2"});
  CHECK(missing.exit_code == 1);
  CHECK(missing.err.find("IMEX channel 2: missing device node") != std::string::npos);
  CHECK(missing.err.find("/dev/nvidia-caps-imex-channels/channel2") != std::string::npos);
  const auto wrong = g.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_IMEX_CHANNELS=3"});
  CHECK(wrong.exit_code == 1);
  CHECK(wrong.err.find("device node minor 4 is not channel 3") != std::string::npos);
  CHECK(g.devices().empty());
  CHECK(g.record().is_null());
}

TEST_CASE("NVIDIA_GDS, _MOFED, _GDRCOPY, _NVSWITCH=enabled add their nodes; none found warns") {
  require_root();
  GpuFixture f;
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_GDS=enabled", "NVIDIA_MOFED=enabled",
                    "NVIDIA_GDRCOPY=enabled", "NVIDIA_NVSWITCH=enabled"})
              .err == "");
  const auto devices = f.devices();
  CHECK(devices.at("/dev/nvidia-fs0") == "240:0");
  CHECK(devices.at("/dev/nvidia-fs1") == "240:1");
  CHECK(devices.at("/dev/infiniband/uverbs0") == "231:192");
  CHECK(devices.at("/dev/infiniband/rdma_cm") == "10:58");
  CHECK(devices.count("/dev/infiniband/umad0") == 0);
  CHECK(devices.at("/dev/gdrdrv") == "241:0");
  CHECK(devices.at("/dev/nvidia-nvswitchctl") == "242:255");
  CHECK(devices.at("/dev/nvidia-nvswitch0") == "242:0");
  CHECK(f.mount_at("/etc/cufile.json")["options"] ==
        Json({"ro", "nosuid", "nodev", "rbind", "rprivate"}));
  CHECK(f.mount_at("/run/udev")["source"] == f.host().driver_root() + "/run/udev");

  GpuFixture g;
  REQUIRE(g.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_GDS=yes", "NVIDIA_MOFED=Enabled"}).err ==
          "");
  CHECK(g.devices().count("/dev/nvidia-fs0") == 0);
  CHECK(g.devices().count("/dev/infiniband/rdma_cm") == 0);
  CHECK_FALSE(contains(g.mount_destinations(), "/etc/cufile.json"));

  GpuFixture h;
  const std::string dev = h.host().dev_root() + "/dev/";
  REQUIRE(::unlink((dev + "nvidia-fs0").c_str()) == 0);
  REQUIRE(::unlink((dev + "nvidia-fs1").c_str()) == 0);
  REQUIRE(::symlink("/dev/null", (dev + "nvidia-fs9").c_str()) == 0);
  h.configure({{"runtime", {{"log-file", h.path("shim.log")}}}});
  const auto missing = h.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_GDS=enabled"});
  CHECK(missing.err == "");
  CHECK(missing.exit_code == 0);
  CHECK(h.devices().count("/dev/nvidia3") == 1);
  CHECK(h.devices().count("/dev/nvidia-fs9") == 0);
  CHECK_FALSE(contains(h.mount_destinations(), "/etc/cufile.json"));
  CHECK(gcr::test::read_file(h.path("shim.log"))
            .find("NVIDIA_GDS=enabled: no device node /dev/nvidia-fs* (" +
                  dev.substr(0, dev.size() - 1) + ")") != std::string::npos);
  CHECK(h.create({"NVIDIA_GDS=enabled"}).exit_code == 0);
  CHECK(h.devices().empty());
}

TEST_CASE("graphics and display: the GPU's DRM nodes and the graphics configuration files") {
  require_root();
  GpuFixture f;
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=graphics"}).err == "");
  auto dri = [](const NodeNumbers& devices) {
    NodeNumbers out;
    for (const auto& [path, numbers] : devices) {
      if (path.rfind("/dev/dri/", 0) == 0) out.emplace(path, numbers);
    }
    return out;
  };
  CHECK(dri(f.devices()) ==
        NodeNumbers{{"/dev/dri/card1", "226:1"}, {"/dev/dri/renderD128", "226:128"}});
  CHECK(f.spec()["process"]["user"]["additionalGids"] == Json::array({44}));  // card1: root:video
  const auto mounts = f.mount_destinations();
  CHECK(f.mount_at("/etc/vulkan/icd.d/nvidia_icd.json")["source"] ==
        f.host().driver_root() + "/etc/vulkan/icd.d/nvidia_icd.json");
  CHECK_FALSE(contains(mounts, "/usr/share/vulkan/icd.d/nvidia_icd.json"));
  CHECK(contains(mounts, "/usr/share/glvnd/egl_vendor.d/10_nvidia.json"));
  CHECK(contains(mounts, "/usr/share/vulkan/implicit_layer.d/nvidia_layers.json"));

  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=1"}).err == "");
  CHECK(dri(f.devices()).empty());
  CHECK_FALSE(contains(f.mount_destinations(), "/etc/vulkan/icd.d/nvidia_icd.json"));

  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=3", "NVIDIA_DRIVER_CAPABILITIES=display"}).err == "");
  CHECK(dri(f.devices()).empty());
  CHECK(f.devices().size() == 3);  // its GPU node, nvidiactl, nvidia-modeset

  const std::string card = f.host().dev_root() + "/dev/dri/card1";
  REQUIRE(::unlink(card.c_str()) == 0);
  gcr::test::write_file(card, "not a device");
  const auto r = f.create({"NVIDIA_VISIBLE_DEVICES=1", "NVIDIA_DRIVER_CAPABILITIES=all"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("GPU 1: not a character device (" + card + ")") != std::string::npos);
}

TEST_CASE("the CUDA version is asked of libcuda once per driver, then remembered") {
  require_root();
  GpuFixture f;
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.0"}).exit_code == 0);
  const Json cached = Json::parse(gcr::test::read_file(f.path("state/cuda-version.json")));
  CHECK(cached["cuda"] == "12.4");
  f.configure({{"hooks", {{"ctk-path", "/bin/false"}}}});
  CHECK(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_CUDA=cuda>=12.0"}).exit_code == 0);
  const auto nvml = f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_REQUIRE_ARCH=arch>=8.0"});
  CHECK(nvml.exit_code == 1);
  CHECK(nvml.err.find("cannot query the driver") != std::string::npos);
}

TEST_CASE("a spec we cannot read as runc does gets no GPU: runc judges it untouched") {
  require_root();
  GpuFixture f;
  Json spec = gcr::test::busybox_spec({"/bin/sh"});
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=all");
  spec["PROCESS"] = {{"capabilities", {{"bounding", {"CAP_SYS_ADMIN"}}}}};
  f.write_spec(spec.dump());
  const auto r = f.shim(
      {"--log", f.path("log.json"), "--log-format", "json", "create", "--bundle", f.bundle(), "c"});
  CHECK(r.exit_code == 0);
  CHECK(gcr::test::read_file(f.spec_path()) == spec.dump());
  CHECK(gcr::test::read_file(f.path("log.json")).find("differs from `process` only in case") !=
        std::string::npos);
}

TEST_CASE(
    "MIG devices by <gpu>:<mig> and MIG-<uuid>: the parent GPU and the instance's capabilities") {
  require_root();
  GpuFixture f;
  REQUIRE(
      f.create({"NVIDIA_VISIBLE_DEVICES=1:1", "NVIDIA_DRIVER_CAPABILITIES=utility"}).exit_code ==
      0);
  CHECK(f.devices() == NodeNumbers{{"/dev/nvidia0", "195:0"},
                                   {"/dev/nvidiactl", "195:255"},
                                   {"/dev/nvidia-caps/nvidia-cap21", "509:21"},
                                   {"/dev/nvidia-caps/nvidia-cap22", "509:22"}});
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=mig-5EED003B-0000-4000-8000-000000000000,3",
                    "NVIDIA_DRIVER_CAPABILITIES=utility"})
              .exit_code == 0);
  CHECK(f.devices() == NodeNumbers{{"/dev/nvidia0", "195:0"},
                                   {"/dev/nvidia1", "195:1"},
                                   {"/dev/nvidiactl", "195:255"},
                                   {"/dev/nvidia-caps/nvidia-cap12", "509:12"},
                                   {"/dev/nvidia-caps/nvidia-cap13", "509:13"}});
  auto r = f.create({"NVIDIA_VISIBLE_DEVICES=2:0"});
  CHECK(r.err.find("unknown MIG device `2:0`: GPU 2 has no MIG device 0") != std::string::npos);
  r = f.create({"NVIDIA_VISIBLE_DEVICES=1:7"});
  CHECK(r.err.find("unknown MIG device `1:7`: GPU 1 has no MIG device 7") != std::string::npos);
  CHECK(f.record().is_null());
}

TEST_CASE("a MIG device's parent keeps its DRM nodes unless the GPU itself is asked for") {
  require_root();
  GpuFixture f;
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=1:1", "NVIDIA_DRIVER_CAPABILITIES=graphics"}).err ==
          "");
  CHECK(f.devices().count("/dev/nvidia0") == 1);
  CHECK(f.devices().count("/dev/dri/card1") == 0);
  CHECK(f.devices().count("/dev/dri/renderD128") == 0);
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=1:1,1", "NVIDIA_DRIVER_CAPABILITIES=graphics"}).err ==
          "");
  CHECK(f.devices().count("/dev/dri/card1") == 1);
}

TEST_CASE("a graphics file reached through a symlink is injected at the path looked up") {
  require_root();
  GpuFixture f;
  const std::string root = f.host().driver_root();
  const std::string layers = "/usr/share/vulkan/implicit_layer.d/nvidia_layers.json";
  gcr::test::write_file(root + "/usr/lib/nvidia/nvidia_layers.json", "{}\n");
  REQUIRE(::unlink((root + layers).c_str()) == 0);
  REQUIRE(::symlink("/usr/lib/nvidia/nvidia_layers.json", (root + layers).c_str()) == 0);
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0", "NVIDIA_DRIVER_CAPABILITIES=graphics"}).err == "");
  CHECK(f.mount_at(layers)["source"] == root + "/usr/lib/nvidia/nvidia_layers.json");
  CHECK_FALSE(contains(f.mount_destinations(), "/usr/lib/nvidia/nvidia_layers.json"));
}
