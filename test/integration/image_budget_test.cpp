// Hostile images against the loader-cache readers (issue 25, items 1 to 3), each built here on
// the simulated GPU host. One GPU `create` through the shim (before the recording fake runc) and
// one run of the update-libraries hook on the same image each stay under 64 MB of RSS and 1 s
// of CPU and name the budget the image went over; run through the shim and real runc, the
// container still starts with its GPU, ldconfig writing its loader cache in the sandbox. Needs
// root.
#include <doctest/doctest.h>

#include <fstream>

#include "gpu_fixture.h"
#include "hostile_image.h"
#include "ldcache/image_budget.h"
#include "test_support.h"

using gcr::Json;

namespace {

constexpr long kMaxRssKb = 64 * 1024;
constexpr double kMaxCpuSeconds = 1.0;
// Peak RSS is the budget's measure in a plain build. Under AddressSanitizer it is mostly the
// sanitizer's own shadow memory and quarantine (about 450 MB for any of these runs), so only
// the plain build checks it; the sanitizer build still runs every path for memory errors.
constexpr bool kRssIsTheImages = !gcr::test::kSanitized;
const std::string kFolder = "/usr/lib/x86_64-linux-gnu";

struct BudgetFixture : gcr::test::GpuFixture {
  std::string rootfs = bundle() + "/rootfs";

  BudgetFixture() {
    REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host and runc need root");
    gcr::test::make_glibc_rootfs(bundle());
    use_runtime(gcr::test::built("fake-runc"));
  }

  void use_runtime(const std::string& runtime) const {
    configure(
        {{"runtime",
          {{"runtimes", {runtime}}, {"log-file", path("shim.log")}, {"log-level", "debug"}}}});
  }

  // One `create` through the shim, measured; the loader cache is left to the hook, saying why.
  void check_create(const std::string& budget) const {
    check_create(budget, gpu_spec({"/bin/sh"}));
  }
  // `cpu`: whether the CPU time is the image's (not where a sanitizer reads a large spec).
  void check_create(const std::string& budget, const Json& spec, bool cpu = true) const {
    write_spec(spec.dump());
    const auto m = gcr::test::run_measured(
        {gcr::test::built("gpu-container-runtime"), "create", "--bundle", bundle(), "ctr"},
        {{"GPU_CONTAINER_RUNTIME_CONFIG", config_path()},
         {"FAKE_RUNC_RECORD", path("record.json")},
         {"FAKE_RUNC_SPEC", spec_path()}});
    MESSAGE("shim create: " << m.max_rss_kb << " KB peak RSS, " << m.cpu_seconds << " s CPU");
    CHECK(m.exit_code == 0);
    CHECK(m.err == "");
    if (kRssIsTheImages) CHECK(m.max_rss_kb < kMaxRssKb);
    if (cpu) CHECK(m.cpu_seconds < kMaxCpuSeconds);
    CHECK(logged("the loader cache is left to the hook: ", budget));
    CHECK(hook_names() ==
          std::vector<std::string>{"update-libraries", "disable-device-node-modification"});
  }

  // The update-libraries hook on the image, measured (its RSS with ldconfig's, its CPU alone).
  void check_hook(const std::string& budget) const {
    const std::string state =
        Json{{"ociVersion", "1.0.2"}, {"id", "c"}, {"pid", 1}, {"bundle", bundle()}}.dump();
    const auto m =
        gcr::test::run_measured({gcr::test::built("gpu-ctk"), "hook", "update-libraries",
                                 "--folder", kFolder, "--ldconfig-path", "@/sbin/ldconfig"},
                                {}, state);
    MESSAGE("hook: " << m.max_rss_kb << " KB peak RSS (with ldconfig's), " << m.cpu_seconds
                     << " s CPU (without)");
    CHECK(m.exit_code == 0);
    CHECK(m.err == "gpu-ctk hook: warning: the loader cache is left to ldconfig: " + budget + "\n");
    if (kRssIsTheImages) CHECK(m.max_rss_kb < kMaxRssKb);
    CHECK(m.cpu_seconds < kMaxCpuSeconds);
  }

  // The container, through the shim and real runc: its one GPU, and libcuda through the loader.
  void check_container_starts() const {
    use_runtime(gcr::test::runc_path());
    write_spec(
        gpu_spec({"/bin/sh", "-c", "ls /dev | grep -c '^nvidia[0-9][0-9]*$'; /probe"}).dump());
    const auto r = shim({"--root", path("runc-root"), "run", "--bundle", bundle(), "budget"});
    CHECK(r.err == "");
    CHECK(r.exit_code == 0);
    CHECK(r.out == "1\ncuDriverGetVersion: 12040\n");
  }

  static Json gpu_spec(const std::vector<std::string>& args) {
    Json spec = gcr::test::busybox_spec(args);
    spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
    return spec;
  }

 private:
  // Whether the shim logged a line holding both parts.
  [[nodiscard]] bool logged(const std::string& first, const std::string& second) const {
    std::ifstream in(path("shim.log"));
    for (std::string line; std::getline(in, line);) {
      const std::string msg = Json::parse(line)["msg"];
      const auto at = msg.find(first);
      if (at != std::string::npos && msg.find(second, at) != std::string::npos) return true;
    }
    return false;
  }
};

}  // namespace

TEST_CASE("image budget: a 16 MiB ld.so.cache of 699,000 entries naming one 4,095-byte string") {
  BudgetFixture f;
  // The cache is planted again before each run: the one before wrote a real one over it.
  const std::string budget = gcr::test::plant_hostile_image("cache", f.rootfs);
  f.check_create(budget);
  gcr::test::plant_hostile_image("cache", f.rootfs);
  f.check_hook(budget);
  gcr::test::plant_hostile_image("cache", f.rootfs);
  f.check_container_starts();
}

TEST_CASE("image budget: include lines that each match a big directory again") {
  BudgetFixture f;
  const std::string budget = gcr::test::plant_hostile_image("includes", f.rootfs);
  f.check_create(budget);
  f.check_hook(budget);
  f.check_container_starts();
}

TEST_CASE("image budget: libraries with 4,093 needed entries naming one 4,000-byte string") {
  BudgetFixture f;
  const std::string budget = gcr::test::plant_hostile_image("needed", f.rootfs);
  f.check_create(budget);
  f.check_hook(budget);
  f.check_container_starts();
}

// Where each mount lands is checked against every earlier one: a spec of 100,000 mounts (a
// hostile one: no engine writes it) would take the shim minutes. Over 4,096 mounts and device
// nodes the work at create is left to the hooks, which run in the container.
TEST_CASE("a spec of 100,000 mounts: the loader cache is left to the hook, saying why") {
  BudgetFixture f;
  Json spec = BudgetFixture::gpu_spec({"/bin/sh"});
  for (int i = 0; i < 100000; ++i)
    spec["mounts"].push_back({{"destination", "/m/" + std::to_string(i)}, {"type", "tmpfs"}});
  // Under AddressSanitizer reading the 6 MB spec alone takes seconds: its CPU is not the cap's.
  f.check_create(" mounts and device nodes, more than 4096", spec, kRssIsTheImages);
}
