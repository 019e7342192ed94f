// CDI end to end: gpu-ctk cdi generate on the simulated host, validate and list it, then the
// shim resolving names from NVIDIA_VISIBLE_DEVICES, annotations and [requests] mode = "cdi"
// (with the fake runc and with real runc), and podman reading the spec itself. Needs root.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include "cdi_fixture.h"

using gcr::Json;
using gcr::test::CdiFixture;
using gcr::test::GpuFixture;

namespace {

void require_root() {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod)");
}

}  // namespace

TEST_CASE("gpu-ctk cdi generate: a valid spec naming every GPU by index and UUID, plus all") {
  require_root();
  CdiFixture f;
  const auto list = f.ctk({"cdi", "list"});
  CHECK(list.exit_code == 0);
  CHECK(list.err == "");
  for (const auto& gpu : f.host().gpus()) {
    CHECK(list.out.find("nvidia.com/gpu=" + std::to_string(gpu.index) + "\n") != std::string::npos);
    CHECK(list.out.find("nvidia.com/gpu=" + gpu.uuid + "\n") != std::string::npos);
  }
  CHECK(list.out.find("nvidia.com/gpu=all\n") != std::string::npos);
  const auto validate = f.ctk({"cdi", "validate", f.spec_dir + "/nvidia.yaml"});
  CHECK(validate.exit_code == 0);
  CHECK(validate.out == f.spec_dir + "/nvidia.yaml: ok\n");
  const auto json =
      f.ctk({"cdi", "generate", "--format", "json", "--vendor", "example.com", "--class", "accel"});
  const Json doc = Json::parse(json.out);
  CHECK(doc["cdiVersion"] == "0.5.0");
  CHECK(doc["kind"] == "example.com/accel");
  const Json first = doc["devices"][0]["containerEdits"];
  CHECK(first["deviceNodes"] ==
        Json::array(
            {{{"path", "/dev/nvidia3"}, {"hostPath", f.host().dev_root() + "/dev/nvidia3"}},
             {{"path", "/dev/dri/card4"}, {"hostPath", f.host().dev_root() + "/dev/dri/card4"}},
             {{"path", "/dev/dri/renderD131"},
              {"hostPath", f.host().dev_root() + "/dev/dri/renderD131"}}}));
  CHECK_FALSE(first.contains("additionalGids"));
}

TEST_CASE("the shim resolves CDI names: environment, annotations, mode cdi; mixed with live IDs") {
  require_root();
  CdiFixture f;
  const auto& gpus = f.host().gpus();
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=" + gpus[2].uuid}).exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia4") == 1);
  CHECK(f.devices().count("/dev/nvidiactl") == 1);
  CHECK(f.devices().count("/dev/nvidia0") == 0);
  REQUIRE(f.spec()["hooks"]["createContainer"].size() == 1);
  CHECK(f.spec()["hooks"]["createContainer"][0]["args"][2] == "update-libraries");

  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=all"},
                   {{"annotations", {{"cdi.k8s.io/gpu", "nvidia.com/gpu=1"}}}})
              .exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia0") == 1);
  CHECK(f.devices().count("/dev/nvidia3") == 0);

  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0,3"}).exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia3") == 1);
  CHECK(f.devices().count("/dev/nvidia1") == 1);

  f.configure({{"cdi", {{"spec-dirs", {f.spec_dir}}}}, {"requests", {{"mode", "cdi"}}}});
  const auto mode_cdi = f.create({"NVIDIA_VISIBLE_DEVICES=3"});
  REQUIRE_MESSAGE(mode_cdi.exit_code == 0, mode_cdi.err);
  CHECK(f.devices().count("/dev/nvidia1") == 1);
}

TEST_CASE("the shim's log line names the CDI devices asked for, not capabilities they ignore") {
  require_root();
  CdiFixture f;
  f.configure(
      {{"cdi", {{"spec-dirs", {f.spec_dir}}}}, {"runtime", {{"log-file", f.path("shim.log")}}}});
  REQUIRE(f.create({}, {{"annotations", {{"cdi.k8s.io/gpu", "nvidia.com/gpu=1"}}}}).exit_code == 0);
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0,nvidia.com/gpu=2"}).exit_code == 0);
  const std::string log = gcr::test::read_file(f.path("shim.log"));
  CHECK(log.find("GPU request (CDI devices nvidia.com/gpu=1, with their specs' edits): spec now "
                 "has ") != std::string::npos);
  CHECK(log.find("GPU request (compute,utility; CDI devices nvidia.com/gpu=2, with their specs' "
                 "edits): spec now has ") != std::string::npos);
  CHECK(log.find("GPU request (compute,utility): ") == std::string::npos);
}

TEST_CASE(
    "unresolvable names and hostile specs fail create with the reason; the bundle is intact") {
  require_root();
  CdiFixture f;
  auto r = f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=9"});
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "gpu-container-runtime: cannot give the container its GPUs: unresolvable CDI devices "
        "nvidia.com/gpu=9\n");
  CHECK(f.record().is_null());

  REQUIRE(::chmod((f.spec_dir + "/nvidia.yaml").c_str(), 0664) == 0);
  r = f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0"});
  CHECK(r.err.find("unresolvable CDI devices nvidia.com/gpu=0 (1 spec problem(s), first: " +
                   f.spec_dir + "/nvidia.yaml: writable by group or others)") != std::string::npos);
  REQUIRE(::chmod((f.spec_dir + "/nvidia.yaml").c_str(), 0644) == 0);

  const std::pair<std::string, std::string> hostile[] = {
      {R"({"cdiVersion":"0.5.0","kind":"evil.com/x","devices":[{"name":"a","containerEdits":{"hooks":[{"hookName":"createContainer","path":"tmp/evil"}]}}]})",
       "must be a clean absolute path"},
      {R"({"cdiVersion":"0.5.0","kind":"evil.com/x","devices":[{"name":"a","containerEdits":{"deviceNodes":[{"path":"/etc/shadow","hostPath":"/dev/sda"}]}}]})",
       "must be a clean path under /dev"},
      {std::string(
           R"({"cdiVersion":"0.5.0","kind":"evil.com/x","devices":[{"name":"a","containerEdits":{"env":["A=)") +
           std::string(10u << 20, 'x') + R"("]}}]})",
       "larger than 4194304 bytes"},
      {R"({"cdiVersion":"0.5.0","kind":"evil.com/x","devices":[{"name":"a","containerEdits":{"env":[)" +
           std::string(300, '[') + std::string(300, ']') + "]}}]}",
       "nesting deeper than 256 levels"},
  };
  for (const auto& entry : hostile) {
    const auto& text = entry.first;  // named: doctest's CAPTURE cannot take a binding
    const auto& reason = entry.second;
    CAPTURE(reason);
    gcr::test::write_file(f.spec_dir + "/evil.json", text);
    r = f.create({"NVIDIA_VISIBLE_DEVICES=evil.com/x=a"});
    CHECK(r.exit_code == 1);
    CHECK(r.err.find(reason) != std::string::npos);
    const auto validate = f.ctk({"cdi", "validate"});
    CHECK(validate.exit_code == 1);
    CHECK(validate.out.find(f.spec_dir + "/evil.json: ") != std::string::npos);
  }
}

TEST_CASE("a real container through the shim gets exactly the CDI-named GPU") {
  require_root();
  CdiFixture f;
  f.configure({{"cdi", {{"spec-dirs", {f.spec_dir}}}},
               {"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
  gcr::test::make_glibc_rootfs(f.bundle());
  Json spec =
      gcr::test::busybox_spec({"/bin/sh", "-c", "ls /dev | grep nvidia | tr '\\n' ' '; /probe"});
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=" +
                                   f.host().gpus()[0].uuid);
  f.write_spec(spec.dump());
  const auto r = f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-cdi"});
  CHECK(r.err == "");
  CHECK(r.out ==
        "nvidia-modeset nvidia-uvm nvidia-uvm-tools nvidia3 nvidiactl cuDriverGetVersion: 12040\n");
}

TEST_CASE("podman reads the generated spec from /var/run/cdi: --device gives exactly that GPU") {
  require_root();
  REQUIRE_MESSAGE(gcr::test::exists("/usr/bin/podman"),
                  "podman is not installed: run scripts/install-deps.sh");
  GpuFixture f;
  const std::string vendor = "gcr-test-" + std::to_string(::getpid()) + ".example.com";
  const std::string spec_file = "/var/run/cdi/" + vendor + ".json";
  gcr::test::make_dirs("/var/run/cdi");
  REQUIRE(gcr::test::run({gcr::test::built("gpu-ctk"), "cdi", "generate", "--driver-root",
                          f.host().driver_root(), "--dev-root", f.host().dev_root(), "--vendor",
                          vendor, "--ctk-path", gcr::test::built("gpu-ctk"), "--output", spec_file})
              .exit_code == 0);
  const std::string image = gcr::test::make_busybox_image_tar(f.path("image"));
  const std::vector<std::string> podman = {"/usr/bin/podman",        "--root",
                                           f.path("podman/storage"), "--runroot",
                                           f.path("podman/run"),     "--cgroup-manager=cgroupfs",
                                           "--events-backend=file",  "--storage-driver=vfs"};
  const auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin(), podman.begin(), podman.end());
    return gcr::test::run(args);
  };
  REQUIRE(with({"import", image, "gcr-busybox"}).exit_code == 0);
  const auto r = with({"run", "--rm", "--device", vendor + "/gpu=1", "--ulimit", "nofile=1024:1024",
                       "--ulimit", "nproc=1024:1024", "--network", "none", "gcr-busybox", "sh",
                       "-c", "ls /dev | grep nvidia | tr '\\n' ' '"});
  ::unlink(spec_file.c_str());
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(r.out == "nvidia-modeset nvidia-uvm nvidia-uvm-tools nvidia0 nvidiactl ");
  (void)with({"rmi", "-f", "gcr-busybox"});
}
