// What a security audit and fuzzing found (issue 12), each reproduced against the built
// binaries on the simulated host: numbers and parsers, Go's key folding, the driver root as a
// less trusted source, the administrator's capability policy for CDI names, programs we run as
// root, destinations, and what a killed writer leaves behind. Needs root.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "cdi_fixture.h"
#include "gpu_fixture.h"
#include "json/strict_json.h"

using gcr::Json;
using gcr::test::CdiFixture;
using gcr::test::GpuFixture;
using gcr::test::LoggedFixture;

namespace {

using gcr::test::contains;
using gcr::test::kLib;
using gcr::test::kVersion;
using gcr::test::require_root;

std::string spec_with(const std::string& env, const std::string& extra_top) {
  return R"({"ociVersion":"1.0.2","process":{"args":["sh"],"env":[)" + env +
         R"(]},"root":{"path":"rootfs"})" + extra_top + "}";
}

}  // namespace

TEST_CASE("numbers: a spec without a GPU reaches runc byte for byte, with one every number kept") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  GpuFixture f;
  const std::string numbers =
      R"(,"org.example":{"n":[1e400,-922331e30872036854775808,-0,0e0,1E2,18446744073709551616,2.50]})";
  const std::string plain = spec_with(R"("PATH=/bin")", numbers);
  f.write_spec(plain);
  auto r = f.shim({"create", "--bundle", f.bundle(), "c"});
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(gcr::test::read_file(f.spec_path()) == plain);
  CHECK_FALSE(f.record().is_null());

  f.write_spec(spec_with(R"("NVIDIA_VISIBLE_DEVICES=0")", numbers));
  r = f.shim({"create", "--bundle", f.bundle(), "c"});
  CHECK(r.err == "");
  REQUIRE(r.exit_code == 0);
  const std::string written = gcr::test::read_file(f.spec_path());
  CHECK(written.find(R"([
      1e400,
      -922331e30872036854775808,
      -0,
      0e0,
      1E2,
      18446744073709551616,
      2.50
    ])") != std::string::npos);
  CHECK(f.devices().count("/dev/nvidiactl") == 1);
}

// Each value costs the shim tens of bytes however short its text (a spec is read up to 64 MiB):
// a spec of more values than the reader's budget is refused, before it is built, when it asks
// for a GPU; without one nothing is built and runc gets it as it is.
TEST_CASE("a spec of more than 1,048,576 values: refused in one line with a GPU, runc's without") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  GpuFixture f;
  std::string arrays = R"(,"org.example":[)";
  for (std::size_t i = 0; i < gcr::kMaxJsonValues; ++i) arrays += "[],";
  arrays += "[]]";
  const std::string gpu = spec_with(R"("NVIDIA_VISIBLE_DEVICES=0")", arrays);
  f.write_spec(gpu);
  auto r = f.shim({"create", "--bundle", f.bundle(), "c"});
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "gpu-container-runtime: cannot read the container spec: more than 1048576 values (" +
            f.spec_path() + ")\n");
  CHECK(gcr::test::read_file(f.spec_path()) == gpu);
  CHECK(f.record().is_null());

  const std::string plain = spec_with(R"("PATH=/bin")", arrays);
  f.write_spec(plain);
  r = f.shim({"create", "--bundle", f.bundle(), "c"});
  CHECK(r.err == "");
  CHECK(r.exit_code == 0);
  CHECK(gcr::test::read_file(f.spec_path()) == plain);
  CHECK_FALSE(f.record().is_null());
}

TEST_CASE("a number that fits no double in our own config stops nothing from reaching runc") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  GpuFixture f;
  gcr::test::write_file(f.path("bad.json"), R"({"runtime":{"log-level":"info"},"x":1e400})");
  const auto r = f.shim({"--gpu-config", f.path("bad.json"), "--root", f.path("r"), "state", "c9"});
  CHECK(r.err.find("internal error") == std::string::npos);
  // The built-in defaults apply: the machine's runc answers for a container it does not know.
  CHECK(r.err.find("container does not exist") != std::string::npos);
  const auto check =
      gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", f.path("bad.json")});
  CHECK(check.exit_code == 1);
  CHECK(check.err.find("unknown table `x`") != std::string::npos);
}

TEST_CASE("a configuration nested 100,000 tables deep is an error, not a crash") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  GpuFixture f;
  std::string deep = "a = ";
  for (int i = 0; i < 100000; ++i) deep += "{a=";
  deep += "1" + std::string(100000, '}') + "\n";
  gcr::test::write_file(f.path("deep.toml"), deep);
  const auto check =
      gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", f.path("deep.toml")});
  CHECK(check.exit_code == 1);
  CHECK(check.err.find("nesting deeper than 64 levels") != std::string::npos);
  const auto r =
      f.shim({"--gpu-config", f.path("deep.toml"), "--root", f.path("r"), "state", "c9"});
  CHECK(r.exit_code != -1);  // not killed by a signal
  CHECK(r.err.find("container does not exist") != std::string::npos);
  for (const std::string& text :
       {std::string("\x0c= 1\n"), std::string("[\xe2\x82\xac]\nx = 1\n")}) {
    gcr::test::write_file(f.path("odd.toml"), text);
    const auto odd =
        gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", f.path("odd.toml")});
    CHECK(odd.exit_code == 1);
    CHECK(odd.err.find("invalid TOML at line 1") != std::string::npos);
  }
}

TEST_CASE("CDI: a JSON spec with 1e400 and a YAML spec with invalid UTF-8 are refused, not fatal") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  CdiFixture f;
  gcr::test::write_file(
      f.spec_dir + "/big.json",
      R"({"cdiVersion":"0.5.0","kind":"big.com/x","devices":[{"name":"a","containerEdits":{"deviceNodes":[{"path":"/dev/x","major":1e400}]}}]})");
  gcr::test::write_file(
      f.spec_dir + "/utf.yaml",
      "cdiVersion: 0.5.0\nkind: utf.com/x\ndevices:\n- name: a\n  containerEdits:\n"
      "    env: [\"A=\xff\"]\n");
  const auto list = f.ctk({"cdi", "list"});
  CHECK(list.exit_code == 0);
  CHECK(list.err.find(
            "big.json: `devices[0].containerEdits.deviceNodes[0].major` must be an integer") !=
        std::string::npos);
  CHECK(list.err.find("utf.yaml: invalid UTF-8 in a scalar (line 6)") != std::string::npos);
  CHECK(list.out.find("nvidia.com/gpu=0\n") != std::string::npos);
  const auto validate = f.ctk({"cdi", "validate", f.spec_dir + "/utf.yaml"});
  CHECK(validate.exit_code == 1);
  const auto resolve = f.ctk({"cdi", "resolve", "utf.com/x=a"});
  CHECK(resolve.exit_code == 1);
  CHECK(resolve.err.find("unresolvable CDI devices utf.com/x=a") != std::string::npos);
}

TEST_CASE("Go's key folding: `capabilitieſ` and `hooKs` (Kelvin) are runc's, so no GPU") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  LoggedFixture f;
  f.configure({{"requests", {{"accept-env-when-unprivileged", false}}}});
  const std::string env = R"("NVIDIA_VISIBLE_DEVICES=all")";
  std::string folded = spec_with(env, "");
  folded.insert(folded.find(R"("env")"),
                "\"capabilitie\xc5\xbf\":{\"bounding\":[\"CAP_SYS_ADMIN\"]},");
  const std::string kelvin = spec_with(env, ",\"hoo\xe2\x84\xaas\":{}");
  for (const std::string& spec : {folded, kelvin}) {
    f.write_spec(spec);
    const auto r = f.shim({"create", "--bundle", f.bundle(), "c"});
    CHECK(r.exit_code == 0);
    CHECK(gcr::test::read_file(f.spec_path()) == spec);
    CHECK_FALSE(f.record().is_null());
  }
  CHECK(f.warned("differs from `capabilities` only in case"));
  CHECK(f.warned("differs from `hooks` only in case"));
}

TEST_CASE("driver root: files others could change, hard links and absurd sizes are refused, said") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  LoggedFixture f;
  const std::string root = f.host().driver_root();
  // A hard link to a file outside the driver's set, at a library's name.
  gcr::test::write_file(f.path("secret"), "host secret\n");
  const std::string ml = root + kLib + "libnvidia-ml.so." + kVersion;
  ::unlink(ml.c_str());
  REQUIRE(::link(f.path("secret").c_str(), ml.c_str()) == 0);
  // A 2 GiB sparse "library".
  const std::string cfg = root + kLib + "libnvidia-cfg.so." + kVersion;
  REQUIRE(::truncate(cfg.c_str(), off_t{2} << 30) == 0);
  // A binary directory others can write, and a library a user owns (either could be swapped
  // by that user between our check and runc's mount).
  REQUIRE(::chmod((root + "/usr/bin").c_str(), 0777) == 0);
  const std::string jit = root + kLib + "libnvidia-ptxjitcompiler.so." + kVersion;
  REQUIRE(::chown(jit.c_str(), 1000, 1000) == 0);
  const auto r = f.create({"NVIDIA_VISIBLE_DEVICES=0"});
  CHECK(r.err == "");
  REQUIRE(r.exit_code == 0);
  const auto mounts = f.mount_destinations();
  CHECK_FALSE(contains(mounts, kLib + "libnvidia-ml.so." + kVersion));
  CHECK_FALSE(contains(mounts, kLib + "libnvidia-cfg.so." + kVersion));
  CHECK_FALSE(contains(mounts, "/usr/bin/nvidia-smi"));
  CHECK_FALSE(contains(mounts, kLib + "libnvidia-ptxjitcompiler.so." + kVersion));
  CHECK(contains(mounts, kLib + "libcuda.so." + kVersion));
  CHECK(f.warned("refused " + ml + ": a hard link (2 names) on a writable filesystem"));
  CHECK(f.warned("refused " + cfg + ": larger than 1 GiB"));
  CHECK(f.warned("writable by group or others (" + root + "/usr/bin)"));
  CHECK(f.warned("refused " + jit + ": not owned by root"));
}

TEST_CASE("driver root: a missing libcuda and a /proc/devices without nvidia-uvm are said") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  LoggedFixture f;
  const std::string root = f.host().driver_root();
  ::unlink((root + kLib + "libcuda.so." + kVersion).c_str());
  gcr::test::write_file(f.host().dev_root() + "/proc/devices", "garbage\n");
  const auto r = f.create({"NVIDIA_VISIBLE_DEVICES=0"});
  REQUIRE(r.exit_code == 0);
  CHECK(f.devices().count("/dev/nvidia-uvm") == 0);
  CHECK(f.warned("no usable libcuda.so." + kVersion + " in the driver root"));
  CHECK(f.warned("/dev/nvidia-uvm not given: nvidia-uvm is not listed in"));
}

TEST_CASE("driver root: an ld.so.cache entry outside the library directories is refused") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  gcr::test::SimHostOptions options;
  options.layout = gcr::test::LibLayout::kLib64Cache;
  LoggedFixture f(options);
  const std::string root = f.host().driver_root();
  gcr::test::make_dirs(root + "/etc/evil");
  gcr::test::write_file(root + "/etc/evil/libnvidia-ml.so." + kVersion,
                        gcr::test::read_file(root + "/usr/lib64/libnvidia-ml.so." + kVersion));
  gcr::test::make_symlink("libnvidia-ml.so." + kVersion, root + "/etc/evil/libnvidia-ml.so.1");
  gcr::test::write_file(root + "/etc/ld.so.conf", "/usr/lib64\n/usr/lib\n/etc/evil\n");
  REQUIRE(gcr::test::run({"/sbin/ldconfig", "-r", root}).exit_code == 0);
  const auto r = f.create({"NVIDIA_VISIBLE_DEVICES=0"});
  REQUIRE(r.exit_code == 0);
  for (const auto& m : f.mount_destinations()) CHECK(m.rfind("/etc/evil", 0) != 0);
  CHECK(f.warned("refused " + root + "/etc/evil/libnvidia-ml.so." + kVersion +
                 " from the driver root's ld.so.cache: not in a library directory"));
  const Json hooks = f.spec()["hooks"]["createContainer"];
  for (const auto& hook : hooks) {
    for (const auto& arg : hook["args"])
      CHECK(arg.get<std::string>().find("/etc/evil") == std::string::npos);
  }
}

TEST_CASE("supported-capabilities holds for CDI names as it does for IDs") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  CdiFixture f(Json{{"requests", {{"supported-capabilities", {"utility", "compute"}}}}});
  const std::string all = "NVIDIA_DRIVER_CAPABILITIES=compute,utility";
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0", all}).exit_code == 0);
  const auto by_id = f.devices();
  const auto id_mounts = f.mount_destinations();
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=nvidia.com/gpu=0"}).exit_code == 0);
  const auto by_name = f.devices();
  for (const auto& device : by_name) {
    const std::string& path = device.first;
    CHECK_MESSAGE(path.rfind("/dev/dri/", 0) != 0, path);
    CHECK_MESSAGE(path != "/dev/nvidia-modeset", path);
  }
  CHECK(by_name == by_id);
  for (const auto& m : f.mount_destinations()) {
    for (const char* graphics : {"libGLX_nvidia", "libnvidia-glcore", "libnvidia-encode",
                                 "libnvidia-ngx", "vulkan", "egl_vendor"}) {
      CHECK_MESSAGE(m.find(graphics) == std::string::npos, m);
    }
  }
  CHECK(contains(f.mount_destinations(), kLib + "libcuda.so." + kVersion));
  // The spec's hook makes no link to a withheld library (the GLX and optical-flow links would
  // dangle), and keeps exactly the others: libcuda's, in both library folders.
  std::vector<std::string> links;
  const Json spec = f.spec();
  for (const auto& hook : spec["hooks"]["createContainer"]) {
    const Json& args = hook["args"];
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--link") links.push_back(args[i + 1].get<std::string>());
    }
  }
  CHECK(links == std::vector<std::string>{"libcuda.so.1::" + kLib + "libcuda.so",
                                          "libcuda.so.1::/usr/lib/i386-linux-gnu/libcuda.so"});
}

TEST_CASE(
    "programs we run as root: hooks, ctk-path and runtimes others could replace are refused") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  CdiFixture f;
  // A CDI hook in a directory anyone can write.
  gcr::test::make_dirs(f.path("open"));
  REQUIRE(::chmod(f.path("open").c_str(), 0777) == 0);
  gcr::test::write_file(f.path("open/hook"), "#!/bin/sh\n", 0755);
  gcr::test::write_file(
      f.spec_dir + "/hooked.json",
      R"({"cdiVersion":"0.5.0","kind":"hook.com/x","devices":[{"name":"a","containerEdits":{"hooks":[{"hookName":"createContainer","path":")" +
          f.path("open/hook") + R"("}]}}]})");
  auto r = f.create({"NVIDIA_VISIBLE_DEVICES=hook.com/x=a"});
  CHECK(r.exit_code == 1);
  CHECK(r.err ==
        "gpu-container-runtime: cannot give the container its GPUs: hook program refused: "
        "writable by group or others (" +
            f.path("open") + ")\n");
  // gpu-ctk owned by another user.
  gcr::test::make_dirs(f.path("bin"));
  gcr::test::write_file(f.path("bin/gpu-ctk"), gcr::test::read_file(gcr::test::built("gpu-ctk")),
                        0755);
  REQUIRE(::chown(f.path("bin/gpu-ctk").c_str(), 1000, 1000) == 0);
  f.configure(
      {{"hooks", {{"ctk-path", f.path("bin/gpu-ctk")}}}, {"cdi", {{"spec-dirs", {f.spec_dir}}}}});
  r = f.create({"NVIDIA_VISIBLE_DEVICES=0"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("hook program refused: not owned by root (" + f.path("bin/gpu-ctk") + ")") !=
        std::string::npos);
  // runc found through a directory anyone can write; a relative runtime path.
  // The untrusted runc would leave a marker; the real one (next in the search) answers instead.
  gcr::test::write_file(f.path("open/runc"), "#!/bin/sh\ntouch " + f.path("ran") + "\n", 0755);
  gcr::test::write_file(f.path("rt.toml"), "[runtime]\nruntimes = [\"runc\"]\n");
  gcr::test::RunOptions path_first;
  path_first.env["PATH"] = f.path("open");
  const auto rt = f.shim({"--gpu-config", f.path("rt.toml"), "state", "c"}, path_first);
  CHECK_FALSE(gcr::test::exists(f.path("ran")));
  CHECK(rt.err.find("container does not exist") != std::string::npos);
  CHECK(rt.err.find(f.path("open") + "/runc") == std::string::npos);
  gcr::test::write_file(f.path("rel.toml"), "[runtime]\nruntimes = [\"bin/runc\"]\n");
  const auto rel =
      gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", f.path("rel.toml")});
  CHECK(rel.exit_code == 1);
  CHECK(rel.err.find("`bin/runc` must be a name searched in PATH or an absolute path") !=
        std::string::npos);
  // A configuration anyone can write.
  gcr::test::write_file(f.path("open.toml"), "[runtime]\nlog-level = \"info\"\n", 0666);
  REQUIRE(::chmod(f.path("open.toml").c_str(), 0666) == 0);
  const auto open =
      gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", f.path("open.toml")});
  CHECK(open.exit_code == 1);
  CHECK(open.err ==
        "gpu-ctk: config: refused: writable by group or others (" + f.path("open.toml") + ")\n");
  // A root-owned configuration whose directory others can write, or reached through a symlink
  // someone else owns in a sticky directory: whoever can replace it there would decide.
  const auto check = [](const std::string& file) {
    return gcr::test::run({gcr::test::built("gpu-ctk"), "config", "check", file});
  };
  gcr::test::make_dirs(f.path("shared"));
  REQUIRE(::chmod(f.path("shared").c_str(), 0777) == 0);
  gcr::test::write_file(f.path("shared/c.toml"), "[runtime]\nlog-level = \"info\"\n");
  const auto shared = check(f.path("shared/c.toml"));
  CHECK(shared.exit_code == 1);
  CHECK(shared.err ==
        "gpu-ctk: config: refused: writable by group or others (" + f.path("shared") + ")\n");
  gcr::test::make_dirs(f.path("sticky"));
  REQUIRE(::chmod(f.path("sticky").c_str(), 01777) == 0);
  gcr::test::make_symlink(f.path("rt.toml"), f.path("sticky/theirs.toml"));
  REQUIRE(::lchown(f.path("sticky/theirs.toml").c_str(), 1000, 1000) == 0);
  const auto theirs = check(f.path("sticky/theirs.toml"));
  CHECK(theirs.exit_code == 1);
  CHECK(theirs.err ==
        "gpu-ctk: config: refused: a symlink not owned by root in a directory "
        "others can write (" +
            f.path("sticky/theirs.toml") + ")\n");
  gcr::test::make_symlink(f.path("rt.toml"), f.path("sticky/roots.toml"));
  CHECK(check(f.path("sticky/roots.toml")).exit_code == 0);
}

TEST_CASE("destinations: the container's own mount wins over the driver's file") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  LoggedFixture f;
  gcr::test::write_file(f.path("my-smi"), "#!/bin/sh\n", 0755);
  const Json mounts = {{"mounts",
                        {{{"destination", "/usr/bin/nvidia-smi"},
                          {"source", f.path("my-smi")},
                          {"type", "bind"},
                          {"options", {"rbind", "ro"}}}}}};
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"}, mounts).exit_code == 0);
  CHECK(f.mount_at("/usr/bin/nvidia-smi")["source"] == f.path("my-smi"));
  CHECK(f.warned("the container's own mount at /usr/bin/nvidia-smi is kept"));
}

TEST_CASE("a killed writer's temporary file is cleaned up; a live one's is left alone") {
  require_root("the simulated GPU host needs root (mknod, chown)");
  GpuFixture f;
  const std::string stale = f.bundle() + "/.config.json.0123456789abcdef.tmp";
  const std::string fresh = f.bundle() + "/.config.json.fedcba9876543210.tmp";
  gcr::test::write_file(stale, "{}");
  gcr::test::write_file(fresh, "{}");
  const struct timeval old_times[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
  REQUIRE(::utimes(stale.c_str(), old_times) == 0);
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=0"}).exit_code == 0);
  CHECK_FALSE(gcr::test::exists(stale));
  CHECK(gcr::test::exists(fresh));
  ::unlink(fresh.c_str());
  REQUIRE(f.create({"NVIDIA_VISIBLE_DEVICES=1"}).exit_code == 0);
  const auto listing = gcr::test::run({"/bin/ls", "-A", f.bundle()});
  CHECK(listing.out == "config.json\n");
}
