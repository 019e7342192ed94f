// Real containers on NVIDIA's real userspace driver files (Debian 12's non-free packages,
// test/real-driver.sh) in Debian's layout, the .run installer's and a driver kept in
// /usr/local/nvidia, with our simulated /dev and /proc around them: per capability, what a user of
// that capability finds inside. Needs root; the driver files are downloaded once and cached.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "gpu_fixture.h"
#include "real_driver.h"

using gcr::Json;
using gcr::test::GpuFixture;

namespace {

const std::string& layouts() {
  return gcr::test::real_driver_layouts();
}

std::string driver_version() {
  return gcr::test::real_driver_version();
}

// Every file and link name in a driver root: a missing dependency or a failed dlopen that
// names one of these is the runtime's fault; any other (libX11.so.6) is the image's to have.
std::set<std::string> driver_file_names(const std::string& root) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file() || e.is_symlink()) names.insert(e.path().filename());
  }
  return names;
}

// The glibc rootfs plus the C library parts the driver's libraries and programs need.
void make_rootfs(const GpuFixture& f) {
  gcr::test::make_glibc_rootfs(f.bundle());
  const std::string lib = f.bundle() + "/rootfs/lib/x86_64-linux-gnu/";
  for (const char* name : {"libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1"}) {
    if (gcr::test::run({"/bin/cp", "-L", std::string("/lib/x86_64-linux-gnu/") + name, lib + name})
            .exit_code != 0)
      throw std::runtime_error(std::string("cannot copy ") + name);
  }
  if (gcr::test::run({"/sbin/ldconfig", "-r", f.bundle() + "/rootfs"}).exit_code != 0)
    throw std::runtime_error("ldconfig -r");
}

// What the container script prints, one fact per line:
//   "missing <lib>: <needed>"   a dependency the loader cannot find (ldd's way)
//   "dangling <link>"           a link to nothing
//   "named <file>: <result>"    dlopen of a library a JSON/ICD file names
//   "module <path>: <result>"   dlopen of a module another loader opens by path
//   "has <path>"                for the existence checks
//   the output of nvidia-smi and the probe.
constexpr const char* kInspect = R"SH(
ldso=/lib64/ld-linux-x86-64.so.2
for f in $(find /usr/lib /usr/share /etc /usr/local/nvidia/lib64 -name '*.so*' 2>/dev/null | grep -v i386 | sort); do
  [ -e "$f" ] || { echo "dangling $f"; continue; }
  LD_TRACE_LOADED_OBJECTS=1 $ldso "$f" 2>&1 | grep 'not found' | sed "s|^[[:space:]]*\([^ ]*\) => not found|missing $f: \1|"
done
for j in $(find /usr/share/glvnd /usr/share/egl /usr/share/vulkan /etc/vulkan -name '*.json' 2>/dev/null | sort); do
  for l in $(sed -n 's/.*"library_path" *: *"\([^"]*\)".*/\1/p' "$j"); do /probe "$l" | sed "s|^|named |"; done
done
[ -f /etc/OpenCL/vendors/nvidia.icd ] && /probe "$(cat /etc/OpenCL/vendors/nvidia.icd)" | sed "s|^|named |"
for m in /usr/lib/x86_64-linux-gnu/vdpau/libvdpau_nvidia.so.1 /usr/lib/x86_64-linux-gnu/gbm/nvidia-drm_gbm.so /usr/lib/xorg/modules/drivers/nvidia_drv.so /usr/lib/xorg/modules/extensions/libglxserver_nvidia.so; do
  [ -e "$m" ] && echo "has $m"
done
[ -e /usr/lib/x86_64-linux-gnu/gbm/nvidia-drm_gbm.so ] && /probe /usr/lib/x86_64-linux-gnu/gbm/nvidia-drm_gbm.so | sed "s|^|module |"
[ -e /usr/lib/x86_64-linux-gnu/vdpau/libvdpau_nvidia.so.1 ] && /probe /usr/lib/x86_64-linux-gnu/vdpau/libvdpau_nvidia.so.1 | sed "s|^|module |"
[ -e /usr/share/glvnd/egl_vendor.d/10_nvidia.json ] && for n in libGLX_indirect.so.0 libnvidia-vulkan-producer.so; do
  /probe "$n" | sed "s|^|named |"
done
for l in /usr/lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/nvidia/current /usr/local/nvidia/lib64; do
  [ -e "$l/libcuda.so.1" ] && { /probe --cuinit; /probe libcuda.so | sed "s|^|named |"; break; }
done
command -v nvidia-smi >/dev/null && nvidia-smi 2>&1 | head -n 1
p=/etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf
[ -e $p ] && echo "profile $(cat $p)"
true
)SH";

struct Inspection {
  std::vector<std::string> lines;
  std::string err;
  int exit_code = 0;
  std::vector<std::string> destinations;
  std::vector<std::string> sources;  // the host files mounted, links resolved
  bool library_hook = false;         // the loader cache was left to update-libraries

  [[nodiscard]] bool has(const std::string& line) const {
    return std::find(lines.begin(), lines.end(), line) != lines.end();
  }
  [[nodiscard]] bool has_prefix(const std::string& prefix) const {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& line) { return line.starts_with(prefix); });
  }
  // Lines starting with `prefix` that blame a driver file (the runtime's fault).
  [[nodiscard]] std::vector<std::string> driver_faults(const std::string& prefix,
                                                       const std::set<std::string>& names) const {
    std::vector<std::string> out;
    for (const auto& line : lines) {
      if (line.rfind(prefix, 0) != 0) continue;
      if (prefix == "dangling ") {
        out.push_back(line);
        continue;
      }
      // "missing <lib>: <needed>" or "named <name>: <dlerror>" ("X: cannot open shared ...")
      const auto colon = line.find(": ");
      const std::string rest = line.substr(colon + 2);
      if (rest == "ok") continue;
      const std::string blamed = rest.substr(0, rest.find(':'));
      if (names.count(blamed.substr(blamed.rfind('/') + 1)) != 0) out.push_back(line);
    }
    return out;
  }
};

// The simulated /dev and /proc of a host whose driver root is the real driver's `layout`, with
// `extra` configuration, and the environment that points gpu-ctk at it.
struct RealRoot {
  GpuFixture fixture;
  gcr::test::RunOptions env;

  explicit RealRoot(const std::string& layout, const Json& extra = Json::object())
      : fixture(options()) {
    Json config{{"driver", {{"root", layouts() + "/" + layout}}}};
    config.merge_patch(extra);
    fixture.configure(config);
    env.env["GPU_CONTAINER_RUNTIME_CONFIG"] = fixture.config_path();
  }

 private:
  static gcr::test::SimHostOptions options() {
    gcr::test::SimHostOptions o;
    o.driver_version = driver_version();
    return o;
  }
};

Inspection inspect(const std::string& layout, const std::string& caps) {
  const RealRoot real(layout, {{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
  const GpuFixture& f = real.fixture;
  make_rootfs(f);
  Json spec = gcr::test::busybox_spec({"/bin/sh", "-c", kInspect});
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
  spec["process"]["env"].push_back("NVIDIA_DRIVER_CAPABILITIES=" + caps);
  f.write_spec(spec.dump(2));
  const auto r =
      f.shim({"--root", f.path("runc-root"), "run", "--bundle", f.bundle(), "gcr-real-driver"});
  Inspection out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) out.lines.push_back(line);
  out.err = r.err;
  out.exit_code = r.exit_code;
  out.destinations = f.mount_destinations();
  const Json spec_now = f.spec();
  for (const auto& hook : spec_now["hooks"].value("createContainer", Json::array())) {
    const auto& args = hook.value("args", Json::array());
    if (std::find(args.begin(), args.end(), "update-libraries") != args.end())
      out.library_hook = true;
  }
  for (const auto& m : spec_now["mounts"]) {
    std::error_code ec;
    const auto real = std::filesystem::canonical(m["source"].get<std::string>(), ec);
    if (!ec && std::filesystem::is_regular_file(real)) out.sources.push_back(real);
  }
  return out;
}

// A driver kept in /usr/local/nvidia (cloud GPU hosts, the H100 and H200 hosts of issue 44):
// libGLX_indirect.so.0 lies beside libGLX_nvidia.so.<version> in lib64, which the loader
// searches only through its cache, and ldconfig gives the link no entry there (it indexes the
// file under its soname): the host's loader cannot open it by name either.
const std::string kIndirectUnreachable =
    "named libGLX_indirect.so.0: libGLX_indirect.so.0: cannot open shared object file: No such "
    "file or directory";

std::vector<std::string> named_faults(const Inspection& in, const std::string& layout,
                                      const std::set<std::string>& names) {
  auto faults = in.driver_faults("named ", names);
  if (layout == "nvidia") std::erase(faults, kIndirectUnreachable);
  return faults;
}

void check_clean(const Inspection& in, const std::string& layout) {
  static std::map<std::string, std::set<std::string>> names;
  if (!names.count(layout)) names[layout] = driver_file_names(layouts() + "/" + layout);
  CHECK(in.err == "");
  CHECK(in.exit_code == 0);
  CHECK(in.driver_faults("dangling ", names[layout]) == std::vector<std::string>{});
  CHECK(in.driver_faults("missing ", names[layout]) == std::vector<std::string>{});
  CHECK(named_faults(in, layout, names[layout]) == std::vector<std::string>{});
  CHECK(in.driver_faults("module ", names[layout]) == std::vector<std::string>{});
  std::set<std::string> unique(in.destinations.begin(), in.destinations.end());
  CHECK(unique.size() == in.destinations.size());
  // Each host file is mounted once; its other names in the container are links.
  std::map<std::string, int> mounted;
  for (const auto& source : in.sources) ++mounted[source];
  for (const auto& once : mounted) CHECK_MESSAGE(once.second == 1, once.first);
}

bool mounts_file(const Inspection& in, const std::string& name) {
  return std::any_of(in.destinations.begin(), in.destinations.end(),
                     [&](const std::string& d) { return d.ends_with("/" + name); });
}

const char* const kLayouts[] = {"debian", "flat", "nvidia"};

}  // namespace

TEST_SUITE("real driver") {
  TEST_CASE("compute and utility: the real libcuda and nvidia-smi stop only at the kernel driver") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    for (const char* layout : kLayouts) {
      CAPTURE(layout);
      const auto in = inspect(layout, "compute,utility");
      check_clean(in, layout);
      CHECK(in.has("cuDriverGetVersion: 12020"));
      CHECK(!in.has("cuInit: 0"));
      CHECK(std::any_of(in.lines.begin(), in.lines.end(), [](const std::string& l) {
        return l.find("couldn't communicate with the NVIDIA driver") != std::string::npos;
      }));
      CHECK(in.has("named libnvidia-opencl.so.1: ok"));  // item 6: the ICD with its library
      // The link libcuda.so -> libcuda.so.1 is in the loader cache of a first start (the
      // container's rootfs is fresh), as NVIDIA's CDI mode has it.
      CHECK(in.has("named libcuda.so: ok"));
      CHECK(!mounts_file(in, "libGLX_nvidia.so." + driver_version()));
      CHECK_FALSE(in.library_hook);            // the loader cache written at create
      CHECK_FALSE(in.has_prefix("profile "));  // no EGL, no application profile
    }
  }

  TEST_CASE(
      "doctor --run: the probe loads NVIDIA's real libcuda, which stops at the kernel driver") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    for (const char* layout : kLayouts) {
      CAPTURE(layout);
      const RealRoot real(layout, {{"runtime", {{"runtimes", {gcr::test::runc_path()}}}}});
      const auto r = gcr::test::run(
          {gcr::test::built("gpu-ctk"), "doctor", "--engine", "podman", "--run", "0"}, real.env);
      CHECK(r.exit_code == 1);
      // Without a kernel driver the real library answers cuInit with an error, named by its own
      // cuGetErrorName: the probe resolved every entry point it needs in the real library.
      const auto at = r.out.find("FAIL  run: GPU 0: cuInit: CUDA_ERROR_");
      CHECK_MESSAGE(at != std::string::npos, r.out);
      CHECK(r.out.find("libcuda has no") == std::string::npos);
    }
  }

  TEST_CASE("graphics: EGL platform libraries, GBM, Vulkan producer and GLX indirect") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    for (const char* layout : kLayouts) {
      CAPTURE(layout);
      const auto in = inspect(layout, "graphics");
      check_clean(in, layout);
      CHECK(mounts_file(in, "libnvidia-egl-wayland.so.1.1.10"));  // item 1
      CHECK(mounts_file(in, "libnvidia-egl-gbm.so.1.1.0"));
      CHECK(in.has("has /usr/lib/x86_64-linux-gnu/gbm/nvidia-drm_gbm.so"));  // item 2
      CHECK(in.has("module /usr/lib/x86_64-linux-gnu/gbm/nvidia-drm_gbm.so: ok"));
      CHECK(mounts_file(in, "libnvidia-allocator.so." + driver_version()));
      CHECK(mounts_file(in, "libnvidia-vulkan-producer.so." + driver_version()));  // item 5
      CHECK(!mounts_file(in, "nvidia.icd"));  // item 6: no OpenCL ICD without its library
      CHECK(!mounts_file(in, "libcuda.so." + driver_version()));
      // item 7: the loader finds libGLX_indirect.so.0 (dlopen then stops only at libX11,
      // which is the image's to have).
      const auto indirect = std::find_if(
          in.lines.begin(), in.lines.end(),
          [](const std::string& l) { return l.rfind("named libGLX_indirect.so.0: ", 0) == 0; });
      REQUIRE(indirect != in.lines.end());
      if (std::string(layout) == "nvidia")
        CHECK(*indirect == kIndirectUnreachable);  // as on that host
      else
        CHECK(indirect->find("libGLX_indirect.so.0: cannot open") == std::string::npos);
      // On every layout, libGLX_indirect.so.0 beside the library or away from it (Debian's
      // nvidia/current), the loader cache is written at create.
      CHECK_FALSE(in.library_hook);
      // EGL's application profile names GPU 0 only (the simulated host's minor 3).
      CHECK(
          in.has("profile {\"profiles\": [{\"name\": \"_container_\", \"settings\": "
                 "[\"EGLVisibleDGPUDevices\", 0x8]}], \"rules\": [{\"pattern\": [], "
                 "\"profile\": \"_container_\"}]}"));
    }
  }

  TEST_CASE("video: the VDPAU driver where libvdpau looks, and the codec libraries") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    for (const char* layout : kLayouts) {
      CAPTURE(layout);
      const auto in = inspect(layout, "video");
      check_clean(in, layout);
      CHECK(in.has("has /usr/lib/x86_64-linux-gnu/vdpau/libvdpau_nvidia.so.1"));  // item 3
      CHECK(mounts_file(in, "libnvcuvid.so." + driver_version()));
      CHECK(mounts_file(in, "libnvidia-encode.so." + driver_version()));
      CHECK(in.has("cuDriverGetVersion: 12020"));
    }
  }

  TEST_CASE("display: the Xorg driver and GLX server module the Xorg configuration loads") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    for (const char* layout : kLayouts) {
      CAPTURE(layout);
      const auto in = inspect(layout, "display");
      check_clean(in, layout);
      CHECK(mounts_file(in, "nvidia-drm-outputclass.conf"));
      CHECK(in.has("has /usr/lib/xorg/modules/drivers/nvidia_drv.so"));  // item 4
      CHECK(in.has("has /usr/lib/xorg/modules/extensions/libglxserver_nvidia.so"));
    }
  }

  TEST_CASE("compat32 and all: the 32-bit libraries, and every family at once") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "running containers needs root");
    for (const char* layout : kLayouts) {
      CAPTURE(layout);
      const auto compat = inspect(layout, "compute,compat32");
      check_clean(compat, layout);
      CHECK(mounts_file(compat, "libcuda.so." + driver_version()));
      CHECK(std::count_if(compat.destinations.begin(), compat.destinations.end(),
                          [](const std::string& d) {
                            return (d.find("i386-linux-gnu") != std::string::npos ||
                                    d.starts_with("/usr/local/nvidia/lib/")) &&
                                   d.find("libcuda.so.") != std::string::npos;
                          }) == 1);
      const auto all = inspect(layout, "all");
      check_clean(all, layout);
      CHECK(all.has("cuDriverGetVersion: 12020"));
      CHECK(all.has("has /usr/lib/x86_64-linux-gnu/vdpau/libvdpau_nvidia.so.1"));
      CHECK(all.has("has /usr/lib/xorg/modules/drivers/nvidia_drv.so"));
      const bool wayland_found =
          all.has("named libnvidia-egl-wayland.so.1: ok") ||
          std::any_of(all.lines.begin(), all.lines.end(), [](const std::string& l) {
            return l.rfind("named libnvidia-egl-wayland.so.1: libwayland", 0) == 0;
          });
      CHECK(wayland_found);
    }
  }

  TEST_CASE(
      "info and doctor: the real libcuda and NVML in their own words, the kernel module blamed") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "the driver files are root's");
    for (const char* layout : kLayouts) {
      CAPTURE(layout);
      const RealRoot real(layout);
      const gcr::test::RunOptions& env = real.env;
      const auto info = gcr::test::run({gcr::test::built("gpu-ctk"), "info", "--json"}, env);
      REQUIRE_MESSAGE(info.exit_code == 0, info.err);
      const Json facts = Json::parse(info.out);
      CHECK(facts["driver_version"] == driver_version());
      CHECK(facts["cuda_version"] == "12.2");
      REQUIRE(facts["warnings"].size() == 1);
      CHECK(facts["warnings"][0].get<std::string>().find(
                "nvmlInit failed: Driver Not Loaded, NVML status 9") == 0);
      const auto doctor = gcr::test::run({gcr::test::built("gpu-ctk"), "doctor"}, env);
      CHECK(doctor.exit_code != 0);
      CHECK(doctor.out.find("ok    driver: libcuda answers: CUDA 12.2") != std::string::npos);
      CHECK(doctor.out.find("the NVIDIA kernel module is not loaded or does not match the "
                            "libraries (" +
                            driver_version() + "): nvmlInit failed: Driver Not Loaded") !=
            std::string::npos);
      CHECK(doctor.out.find("reinstall") == std::string::npos);
    }
  }

  TEST_CASE("cdi generate: the spec holds the modules and configuration-named libraries") {
    REQUIRE_MESSAGE(gcr::test::is_root(), "the driver files are root's");
    for (const char* layout : kLayouts) {
      CAPTURE(layout);
      const RealRoot real(layout);
      const GpuFixture& f = real.fixture;
      const gcr::test::RunOptions& env = real.env;
      const std::string out = f.path("nvidia.json");
      // Without its kernel module the real NVML cannot name MIG devices, which generate needs
      // when the driver lists MIG instances: a host without a kernel module has none.
      f.host().remove_mig_instances();
      const auto r =
          gcr::test::run({gcr::test::built("gpu-ctk"), "cdi", "generate", "--output", out}, env);
      REQUIRE_MESSAGE(r.exit_code == 0, r.err);
      const std::string spec = gcr::test::read_file(out);
      const std::string libraries =
          std::string(layout) == "nvidia" ? "/usr/local/nvidia/lib64" : "/usr/lib/x86_64-linux-gnu";
      for (const std::string& path : {std::string("/usr/lib/xorg/modules/drivers/nvidia_drv.so"),
                                      libraries + "/libnvidia-egl-wayland.so.1.1.10",
                                      std::string("/etc/OpenCL/vendors/nvidia.icd")}) {
        CHECK_MESSAGE(spec.find("\"containerPath\": \"" + path + "\"") != std::string::npos, path);
      }
      // GBM's backend is another name of the allocator library, mounted already: a link to it,
      // made by the hook, as on the host (each host file mounted once).
      const std::string gbm = "/usr/lib/x86_64-linux-gnu/gbm/nvidia-drm_gbm.so";
      CHECK(spec.find("::" + gbm + "\"") != std::string::npos);
      CHECK(spec.find("\"containerPath\": \"" + gbm + "\"") == std::string::npos);
      // The VDPAU driver's name: mounted, or a link to where its file is mounted.
      const std::string vdpau = "/usr/lib/x86_64-linux-gnu/vdpau/libvdpau_nvidia.so.1";
      CHECK((spec.find("::" + vdpau + "\"") != std::string::npos) !=
            (spec.find("\"containerPath\": \"" + vdpau + "\"") != std::string::npos));
      std::map<std::string, int> mounted;
      const Json doc = Json::parse(spec);
      for (const auto& m : doc["containerEdits"]["mounts"]) {
        std::error_code ec;
        const auto real = std::filesystem::canonical(m["hostPath"].get<std::string>(), ec);
        if (!ec && std::filesystem::is_regular_file(real)) ++mounted[real];
      }
      CHECK(mounted.size() > 20);
      for (const auto& once : mounted) CHECK_MESSAGE(once.second == 1, once.first);
    }
  }
}
