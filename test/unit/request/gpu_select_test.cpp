#include <doctest/doctest.h>

#include <map>

#include "request/gpu_select.h"
#include "test_support.h"

namespace {

std::vector<gcr::Gpu> host() {
  std::vector<gcr::Gpu> gpus;
  const unsigned buses[] = {0x06, 0x3b, 0x86, 0xaf};
  const unsigned minors[] = {3, 0, 4, 1};
  for (unsigned i = 0; i < 4; ++i) {
    gcr::Gpu g;
    g.index = i;
    g.bus.bus = buses[i];
    g.minor = minors[i];
    g.uuid = "GPU-0000000" + std::to_string(i) + "-aaaa-bbbb-cccc-dddddddddddd";
    gpus.push_back(g);
  }
  return gpus;
}

gcr::MigDevice mig_of(unsigned index, const std::string& uuid, unsigned gpu_instance) {
  gcr::MigDevice m;
  m.index = index;
  m.uuid = uuid;
  m.gpu_instance = gpu_instance;
  return m;
}

// GPU 1 has two MIG devices (NVML indices 0 and 2: slot 1 is empty).
std::map<std::string, gcr::GpuFacts> nvml() {
  gcr::GpuFacts facts;
  facts.migs = {mig_of(0, "MIG-aaaa", 1), mig_of(2, "MIG-bbbb", 2)};
  return {{host()[1].uuid, facts}};
}

gcr::Result<gcr::Selection> pick(std::vector<std::string> ids) {
  gcr::GpuRequest r;
  r.device_ids = std::move(ids);
  const auto table = nvml();
  return gcr::select_gpus(r, host(), &table);
}

std::vector<unsigned> indices(const gcr::Result<gcr::Selection>& r) {
  REQUIRE(r.ok());
  std::vector<unsigned> out;
  for (const auto& g : r->gpus) out.push_back(g.index);
  return out;
}

}  // namespace

TEST_CASE("indices, UUIDs (any case) and PCI bus ids select GPUs, in index order, once") {
  CHECK(indices(pick({"2", "0"})) == std::vector<unsigned>{0, 2});
  CHECK(indices(pick({"gpu-00000003-AAAA-bbbb-cccc-dddddddddddd"})) == std::vector<unsigned>{3});
  CHECK(indices(pick({"00000000:3B:00.0", "1"})) == std::vector<unsigned>{1});
  // <domain>:<bus>:<device> without the function, as NVIDIA reads it.
  CHECK(indices(pick({"0000:3b:00"})) == std::vector<unsigned>{1});
  gcr::GpuRequest all;
  all.all = true;
  CHECK(indices(gcr::select_gpus(all, host(), nullptr)) == std::vector<unsigned>{0, 1, 2, 3});
}

TEST_CASE("IDs that match nothing fail closed and name the ID") {
  const std::pair<std::string, std::string> cases[] = {
      {"4", "unknown GPU `4`: this host has GPUs 0-3"},
      {"4294967296", "unknown GPU `4294967296`"},
      {"GPU-deadbeef", "unknown GPU `GPU-deadbeef`"},
      {"0000:99:00.0", "unknown GPU `0000:99:00.0`"},
      {"-1", "`-1` is not a GPU index, GPU UUID, PCI bus id or MIG device"},
      {"0x1", "`0x1` is not a GPU index"},
      {"ALL", "`ALL` is not a GPU index"},
      {"../../dev/sda", "`../../dev/sda` is not a GPU index"},
      {"\xef\xbc\x91", "is not a GPU index"},
      {"MIG-1234", "unknown MIG device `MIG-1234`: no GPU has it"},
      {"1:1", "unknown MIG device `1:1`: GPU 1 has no MIG device 1"},
      {"0:0", "unknown MIG device `0:0`: GPU 0 has no MIG device 0"},
      {"7:0", "unknown MIG device `7:0`: this host has GPUs 0-3"},
      {"a:b", "`a:b` is not <gpu>:<mig>"},
      {"0000:99:00", "unknown GPU `0000:99:00`"},
      {"1:2:3:4", "`1:2:3:4` is not a GPU index"},
  };
  for (const auto& entry : cases) {
    const auto& id = entry.first;  // named: doctest's CAPTURE cannot take a binding
    const auto& expected = entry.second;
    CAPTURE(id);
    auto r = pick({"0", id});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(expected) != std::string::npos);
  }
}

TEST_CASE("a GPU the driver has not initialised has no UUID: the error says so and what to do") {
  auto gpus = host();
  gpus[2].uuid = gcr::test::kUninitialisedUuid;
  gcr::GpuRequest r;
  r.device_ids = {"GPU-00000002-aaaa-bbbb-cccc-dddddddddddd"};
  const auto by_uuid = gcr::select_gpus(r, gpus, nullptr);
  REQUIRE_FALSE(by_uuid.ok());
  CHECK(by_uuid.error().message ==
        "unknown GPU `GPU-00000002-aaaa-bbbb-cccc-dddddddddddd`: this host has GPUs 0-3; the "
        "driver gives no UUID for GPU 2 until it initialises it (nvidia-persistenced does at "
        "boot), so name it by index or PCI bus id");
  CHECK_FALSE(gpus[2].uuid_known());
  // The placeholder itself names no GPU, and the others' UUIDs still match.
  r.device_ids = {gpus[2].uuid};
  CHECK_FALSE(gcr::select_gpus(r, gpus, nullptr).ok());
  r.device_ids = {"2", gpus[3].uuid};
  CHECK(indices(gcr::select_gpus(r, gpus, nullptr)) == std::vector<unsigned>{2, 3});
}

TEST_CASE("IDs next to `all` are still checked") {
  gcr::GpuRequest r;
  r.all = true;
  r.device_ids = {"x"};
  auto selected = gcr::select_gpus(r, host(), nullptr);
  REQUIRE_FALSE(selected.ok());
  CHECK(selected.error().message.find("`x` is not a GPU index") != std::string::npos);
}

TEST_CASE("MIG devices by UUID (any case) and <gpu>:<mig>; their parent GPU comes along") {
  auto r = pick({"mig-AAAA", "1:2", "3"});
  CHECK(indices(r) == std::vector<unsigned>{1, 3});
  REQUIRE(r->migs.size() == 2);
  CHECK(r->migs[0].mig.uuid == "MIG-aaaa");
  CHECK(r->migs[1].mig.gpu_instance == 2);
  CHECK(r->migs[1].gpu.index == 1);
  CHECK(pick({"1:0", "MIG-aaaa"})->migs.size() == 1);
  gcr::GpuRequest no_nvml;
  no_nvml.device_ids = {"1:0"};
  CHECK(gcr::select_gpus(no_nvml, host(), nullptr).error().message ==
        "MIG device `1:0`: NVML did not answer");
}
