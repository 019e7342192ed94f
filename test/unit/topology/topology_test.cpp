#include <doctest/doctest.h>

#include "driver/host.h"
#include "sim_host.h"
#include "test_support.h"
#include "topology/topology.h"
#include "topology_fixtures.h"

using gcr::PcieRelation;

TEST_CASE("a pair is worth 100 per NVLink, then its PCIe closeness") {
  const auto dgx = gcr::test::topology_of(gcr::test::topology_fixture("dgx1"));
  CHECK(dgx.pair_score(2, 3) == 250);  // NV2, one switch
  CHECK(dgx.pair_score(0, 3) == 230);  // NV2, host bridge
  CHECK(dgx.pair_score(0, 4) == 210);  // NV2, across NUMA nodes
  CHECK(dgx.pair_score(0, 5) == 10);   // nothing in common
  CHECK(dgx.set_score({0, 1, 2, 3}) == 1120);
  const auto box = gcr::test::topology_of(gcr::test::topology_fixture("pcie4"));
  CHECK(box.pair_score(0, 1) == 50);
  CHECK(box.pair_score(1, 2) == 10);
  CHECK(box.index_of("GPU-3") == 3u);
  CHECK_FALSE(box.index_of("GPU-9"));
}

TEST_CASE("sysfs alone: the PCIe relation from where the device paths part, NUMA from numa_node") {
  const auto& fixture = gcr::test::topology_fixture("dgx1");
  gcr::test::TempDir dir;
  auto options = gcr::test::host_options(fixture);
  options.device_nodes = false;
  const gcr::test::SimHost host(dir / "host", options);
  gcr::DriverHost driver({host.driver_root(), host.dev_root()}, gcr::lstat_node);
  auto gpus = driver.devices().gpus();
  REQUIRE(gpus.ok());
  const auto t = gcr::topology_from_sysfs(*gpus, {host.driver_root(), host.dev_root()});
  CHECK(t.source == "sysfs");
  for (unsigned i = 0; i < 8; ++i) {
    CHECK(t.numa[i] == fixture.numa[i]);
    for (unsigned j = 0; j < 8; ++j) {
      if (i == j) continue;
      CAPTURE(i);
      CAPTURE(j);
      CHECK(t.pcie[i][j] == fixture.pcie(i, j));
      CHECK(t.nvlinks[i][j] == 0);
    }
  }
  const std::string table = gcr::topology_table(t);
  CHECK(table.find("GPU0  X     PIX   PHB   PHB   SYS   SYS   SYS   SYS   0\n") !=
        std::string::npos);
}
