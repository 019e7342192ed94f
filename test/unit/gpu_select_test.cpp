#include <doctest/doctest.h>

#include "gpu_select.h"

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

gcr::Result<std::vector<gcr::Gpu>> pick(std::vector<std::string> ids) {
  gcr::GpuRequest r;
  r.device_ids = std::move(ids);
  return gcr::select_gpus(r, host());
}

std::vector<unsigned> indices(const gcr::Result<std::vector<gcr::Gpu>>& r) {
  REQUIRE(r.ok());
  std::vector<unsigned> out;
  for (const auto& g : *r) out.push_back(g.index);
  return out;
}

}  // namespace

TEST_CASE("indices, UUIDs (any case) and PCI bus ids select GPUs, in index order, once") {
  CHECK(indices(pick({"2", "0"})) == std::vector<unsigned>{0, 2});
  CHECK(indices(pick({"gpu-00000003-AAAA-bbbb-cccc-dddddddddddd"})) == std::vector<unsigned>{3});
  CHECK(indices(pick({"00000000:3B:00.0", "1"})) == std::vector<unsigned>{1});
  gcr::GpuRequest all;
  all.all = true;
  CHECK(indices(gcr::select_gpus(all, host())) == std::vector<unsigned>{0, 1, 2, 3});
}

TEST_CASE("IDs that match nothing fail closed and name the ID") {
  const std::pair<std::string, std::string> cases[] = {
      {"4", "unknown GPU `4`: this host has GPUs 0-3"},
      {"4294967296", "unknown GPU `4294967296`"},
      {"GPU-deadbeef", "unknown GPU `GPU-deadbeef`"},
      {"0000:99:00.0", "unknown GPU `0000:99:00.0`"},
      {"-1", "`-1` is not a GPU index, GPU UUID or PCI bus id"},
      {"0x1", "`0x1` is not a GPU index"},
      {"ALL", "`ALL` is not a GPU index"},
      {"../../dev/sda", "`../../dev/sda` is not a GPU index"},
      {"\xef\xbc\x91", "is not a GPU index"},
      {"MIG-1234", "MIG devices cannot be selected"},
      {"0:1", "MIG devices cannot be selected"},
  };
  for (const auto& [id, expected] : cases) {
    CAPTURE(id);
    auto r = pick({"0", id});
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message.find(expected) != std::string::npos);
  }
}

TEST_CASE("IDs next to `all` are still checked") {
  gcr::GpuRequest r;
  r.all = true;
  r.device_ids = {"x"};
  auto selected = gcr::select_gpus(r, host());
  REQUIRE_FALSE(selected.ok());
  CHECK(selected.error().message.find("`x` is not a GPU index") != std::string::npos);
}
