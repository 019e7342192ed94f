#include <doctest/doctest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "deviceplugin/preferred.h"
#include "test_support.h"
#include "topology_fixtures.h"

using gcr::PluginDevice;
using Ids = std::vector<std::string>;

namespace {

using gcr::test::kSanitized;

// A fixture's devices: GPU i is "GPU-<i>", with `replicas` replicas each.
std::vector<PluginDevice> devices_of(const gcr::Topology& t, const gcr::Config& config) {
  std::vector<gcr::Gpu> gpus;
  for (unsigned i = 0; i < t.uuids.size(); ++i) {
    gcr::Gpu gpu;
    gpu.index = i;
    gpu.uuid = t.uuids[i];
    gpus.push_back(gpu);
  }
  auto devices = gcr::devices_of(gpus, {}, config);
  REQUIRE(devices.ok());
  for (auto& d : *devices) d.numa = t.numa[*t.index_of(d.uuid)];
  return *devices;
}

Ids all_ids(const std::vector<PluginDevice>& devices) {
  Ids ids;
  for (const auto& d : devices) ids.push_back(d.id);
  return ids;
}

gcr::Config config_with(const std::string& allocation, std::int64_t replicas = 1,
                        bool distinct = true) {
  gcr::Config c;
  c.device_plugin.allocation = allocation;
  c.device_plugin.replicas = replicas;
  c.device_plugin.replicas_on_distinct_gpus = distinct;
  return c;
}

// The best worth any valid set of `size` from `available` with `must` reaches (brute force).
std::vector<long> best_possible(const std::vector<PluginDevice>& devices, const Ids& available,
                                const Ids& must, int size, const gcr::Topology& t,
                                const gcr::Config& config) {
  std::vector<const PluginDevice*> pool;
  for (const auto& d : devices) {
    if (std::find(available.begin(), available.end(), d.id) != available.end()) pool.push_back(&d);
  }
  std::vector<long> best;
  const unsigned n = static_cast<unsigned>(pool.size());
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != size) continue;
    std::vector<const PluginDevice*> set;
    for (unsigned i = 0; i < n; ++i) {
      if ((mask & (1u << i)) != 0) set.push_back(pool[i]);
    }
    bool ok = std::all_of(must.begin(), must.end(), [&](const std::string& id) {
      return std::any_of(set.begin(), set.end(),
                         [&](const PluginDevice* d) { return d->id == id; });
    });
    const bool distinct =
        config.device_plugin.replicas > 1 && config.device_plugin.replicas_on_distinct_gpus;
    for (std::size_t a = 0; ok && distinct && a < set.size(); ++a) {
      for (std::size_t b = a + 1; b < set.size(); ++b) ok = ok && set[a]->gpu_id != set[b]->gpu_id;
    }
    if (!ok) continue;
    auto w = gcr::set_worth(set, devices, available, t, config);
    if (best.empty() || w > best) best = w;
  }
  return best;
}

// The GPUs (topology indices) of `ids`, one device per GPU.
std::vector<std::size_t> gpus_of(const gcr::Topology& t, const Ids& ids) {
  std::vector<std::size_t> out;
  for (const auto& id : ids) out.push_back(*t.index_of(id));
  return out;
}

// The highest total link score (Topology::set_score, independent of the chooser) of any `size`
// GPUs that include `must`: what the topology policy must reach with one device per GPU.
long best_link_score(const gcr::Topology& t, const Ids& must, int size) {
  const auto need = gpus_of(t, must);
  const unsigned n = static_cast<unsigned>(t.uuids.size());
  long best = -1;
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    if (__builtin_popcount(mask) != size) continue;
    if (!std::all_of(need.begin(), need.end(), [&](std::size_t g) { return (mask >> g) & 1u; }))
      continue;
    std::vector<std::size_t> set;
    for (unsigned i = 0; i < n; ++i) {
      if ((mask >> i) & 1u) set.push_back(i);
    }
    best = std::max(best, t.set_score(set));
  }
  return best;
}

std::vector<const PluginDevice*> pointers(const std::vector<PluginDevice>& devices,
                                          const Ids& ids) {
  std::vector<const PluginDevice*> out;
  for (const auto& id : ids) {
    for (const auto& d : devices) {
      if (d.id == id) out.push_back(&d);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("topology: the chosen set is the best possible on every fixture, sizes 1 to 8") {
  for (const auto& fixture : gcr::test::topology_fixtures()) {
    if (fixture.gpus > 8) continue;  // brute force over 2^n sets
    CAPTURE(fixture.name);
    const auto t = gcr::test::topology_of(fixture);
    const auto config = config_with("topology");
    const auto devices = devices_of(t, config);
    const Ids available = all_ids(devices);
    for (int size = 1; size <= static_cast<int>(fixture.gpus); ++size) {
      for (const Ids& must : {Ids{}, Ids{available.back()}, Ids{available[1], available[2]}}) {
        if (static_cast<int>(must.size()) > size) continue;
        CAPTURE(size);
        CAPTURE(must.size());
        const auto chosen = gcr::preferred_allocation({available, must, size}, devices, t, config);
        REQUIRE(chosen.size() == static_cast<std::size_t>(size));
        for (const auto& id : must)
          CHECK(std::find(chosen.begin(), chosen.end(), id) != chosen.end());
        CHECK(gcr::set_worth(pointers(devices, chosen), devices, available, t, config) ==
              best_possible(devices, available, must, size, t, config));
        CHECK(t.set_score(gpus_of(t, chosen)) == best_link_score(t, must, size));
        CHECK(gcr::preferred_allocation({available, must, size}, devices, t, config) == chosen);
      }
    }
  }
}

TEST_CASE("topology on DGX-1: the NVLink pairs and quads on one switch, NUMA node and mesh") {
  const auto t = gcr::test::topology_of(gcr::test::topology_fixture("dgx1"));
  const auto config = config_with("topology");
  const auto devices = devices_of(t, config);
  const Ids all = all_ids(devices);
  const auto pick = [&](const Ids& available, const Ids& must, int size) {
    auto ids = gcr::preferred_allocation({available, must, size}, devices, t, config);
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  CHECK(pick(all, {}, 2) == Ids{"GPU-2", "GPU-3"});  // NV2 behind one switch; 6-7 ties, later
  CHECK(pick(all, {}, 4) == Ids{"GPU-0", "GPU-1", "GPU-2", "GPU-3"});
  CHECK(pick(all, {"GPU-4"}, 2) == Ids{"GPU-4", "GPU-7"});
  CHECK(pick(all, {"GPU-4"}, 4) == Ids{"GPU-4", "GPU-5", "GPU-6", "GPU-7"});
  CHECK(pick({"GPU-0", "GPU-2", "GPU-4", "GPU-5"}, {}, 2) == Ids{"GPU-0", "GPU-4"});
  CHECK(pick({"GPU-0", "GPU-1", "GPU-3"}, {}, 2) == Ids{"GPU-0", "GPU-3"});
  CHECK(pick({"GPU-0", "GPU-1"}, {"GPU-3"}, 2).empty());  // must_include not available
  CHECK(pick(all, {"GPU-0", "GPU-1"}, 1).empty());        // must_include larger than size
}

TEST_CASE("PCIe box without NVLink: one switch first, then the same NUMA node") {
  const auto t = gcr::test::topology_of(gcr::test::topology_fixture("pcie4"));
  const auto config = config_with("topology");
  const auto devices = devices_of(t, config);
  CHECK(gcr::preferred_allocation({all_ids(devices), {"GPU-2"}, 2}, devices, t, config) ==
        Ids{"GPU-2", "GPU-3"});
  CHECK(gcr::preferred_allocation({{"GPU-0", "GPU-2", "GPU-3"}, {}, 2}, devices, t, config) ==
        Ids{"GPU-2", "GPU-3"});
}

TEST_CASE("replicas: a request gets different GPUs; packed fills used GPUs, distributed spreads") {
  const auto t = gcr::test::topology_of(gcr::test::topology_fixture("pcie4"));
  for (const std::string policy : {"topology", "packed", "distributed"}) {
    CAPTURE(policy);
    const auto config = config_with(policy, 3);
    const auto devices = devices_of(t, config);
    REQUIRE(devices.size() == 12);
    const auto chosen = gcr::preferred_allocation({all_ids(devices), {}, 3}, devices, t, config);
    REQUIRE(chosen.size() == 3);
    std::set<std::string> gpus;
    for (const auto& id : chosen) gpus.insert(id.substr(0, id.find("::")));
    CHECK(gpus.size() == 3);
  }
  // GPU-0 has two replicas in use, GPU-1 one, GPU-2 and GPU-3 none.
  const Ids available = {"GPU-0::2", "GPU-1::1", "GPU-1::2", "GPU-2::0", "GPU-2::1",
                         "GPU-2::2", "GPU-3::0", "GPU-3::1", "GPU-3::2"};
  const auto packed = config_with("packed", 3);
  const auto spread = config_with("distributed", 3);
  const auto d1 = devices_of(t, packed);
  const auto d2 = devices_of(t, spread);
  CHECK(gcr::preferred_allocation({available, {}, 2}, d1, t, packed) ==
        Ids{"GPU-0::2", "GPU-1::1"});
  CHECK(gcr::preferred_allocation({available, {}, 2}, d2, t, spread) ==
        Ids{"GPU-2::0", "GPU-3::0"});
  // Without the distinct-GPU rule, packed keeps a request on one GPU.
  const auto shared = config_with("packed", 3, false);
  const auto d3 = devices_of(t, shared);
  CHECK(gcr::preferred_allocation({available, {}, 2}, d3, t, shared) ==
        Ids{"GPU-1::1", "GPU-1::2"});
  // With it, two replicas of one GPU in must_include cannot be answered.
  CHECK(gcr::preferred_allocation({available, {"GPU-2::0", "GPU-2::1"}, 2}, d1, t, packed).empty());
}

// Allocate refuses MPS shares of two GPUs, so an answer spanning two fails the pod. With 55
// of 64 shares free, 4 of them are past the exact search: grown share by share, the set took
// the busiest GPU's last share, then three of the next GPU.
TEST_CASE("MPS: a request's shares come from one GPU, the busiest with room for them all") {
  const auto t = gcr::test::topology_of(gcr::test::topology_fixture("dgx1"));
  auto config = config_with("topology", 8, false);
  config.device_plugin.sharing = "mps";
  const auto devices = devices_of(t, config);
  REQUIRE(devices.size() == 64);
  // GPU-0 has 7 shares in use, GPU-3 two; the others none.
  Ids available;
  for (const auto& d : devices) {
    const auto share = d.id.substr(d.id.find("::") + 2);
    if (d.uuid == t.uuids[0] && share != "7") continue;
    if (d.uuid == t.uuids[3] && (share == "0" || share == "1")) continue;
    available.push_back(d.id);
  }
  REQUIRE(available.size() == 55);
  const auto gpus_of_ids = [](const Ids& ids) {
    std::set<std::string> gpus;
    for (const auto& id : ids) gpus.insert(id.substr(0, id.find("::")));
    return gpus;
  };
  const auto four = gcr::preferred_allocation({available, {}, 4}, devices, t, config);
  REQUIRE(four.size() == 4);
  CHECK(gpus_of_ids(four) == std::set<std::string>{t.uuids[3]});
  const auto one = gcr::preferred_allocation({available, {}, 1}, devices, t, config);
  CHECK(one == Ids{t.uuids[0] + "::7"});
  // What must be included decides the GPU; shares of two GPUs or too few cannot be answered.
  const auto with =
      gcr::preferred_allocation({available, {t.uuids[5] + "::3"}, 3}, devices, t, config);
  REQUIRE(with.size() == 3);
  CHECK(gpus_of_ids(with) == std::set<std::string>{t.uuids[5]});
  CHECK(
      gcr::preferred_allocation({available, {t.uuids[0] + "::7"}, 2}, devices, t, config).empty());
  CHECK(gcr::preferred_allocation({available, {t.uuids[1] + "::0", t.uuids[2] + "::0"}, 2}, devices,
                                  t, config)
            .empty());
  CHECK(gcr::preferred_allocation({available, {}, 9}, devices, t, config).empty());
}

TEST_CASE("sixteen GPUs: exact, and the strongest pair wins") {
  const auto t = gcr::test::topology_of(gcr::test::topology_fixture("sixteen"));
  const auto config = config_with("topology");
  const auto devices = devices_of(t, config);
  auto two = gcr::preferred_allocation({all_ids(devices), {}, 2}, devices, t, config);
  std::sort(two.begin(), two.end());
  CHECK(two == Ids{"GPU-10", "GPU-11"});
  const auto eight = gcr::preferred_allocation({all_ids(devices), {}, 8}, devices, t, config);
  CHECK(eight.size() == 8);
  CHECK(t.set_score(gpus_of(t, eight)) == best_link_score(t, {}, 8));
}

TEST_CASE("past the exact search's limit the set is grown greedily, still a valid answer") {
  const auto t = gcr::test::topology_of(gcr::test::topology_fixture("sixteen"));
  const auto config = config_with("topology", 8, false);  // 128 devices: C(128, 8) sets
  const auto devices = devices_of(t, config);
  const Ids available = all_ids(devices);
  const auto chosen =
      gcr::preferred_allocation({available, {available.back()}, 8}, devices, t, config);
  REQUIRE(chosen.size() == 8);
  CHECK(std::find(chosen.begin(), chosen.end(), available.back()) != chosen.end());
  for (const auto& id : chosen)
    CHECK(std::find(available.begin(), available.end(), id) != available.end());
}

// The kubelet asks on every admission. Scores were kept per pair of candidates: 8 GPUs of 1,024
// replicas each (time-slicing allows it) made 67 million of them, 512 MiB a call. Now per pair
// of GPUs: the call runs in a child held to 256 MiB more address space than it starts with
// (under AddressSanitizer, whose shadow reservations a limit on the address space would break,
// the child has none).
TEST_CASE("1,024 replicas of 8 GPUs: an answer within 256 MiB, on distinct GPUs") {
  const auto t = gcr::test::topology_of(gcr::test::topology_fixture("dgx1"));
  const auto config = config_with("topology", 1024);
  const auto devices = devices_of(t, config);
  REQUIRE(devices.size() == 8192);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    long pages = 0;
    std::ifstream("/proc/self/statm") >> pages;
    const rlim_t limit = static_cast<rlim_t>(pages) * ::sysconf(_SC_PAGESIZE) + (256u << 20);
    const rlimit as{limit, limit};
    if (!kSanitized && ::setrlimit(RLIMIT_AS, &as) != 0) ::_exit(2);
    const auto chosen = gcr::preferred_allocation({all_ids(devices), {}, 4}, devices, t, config);
    std::set<std::string> gpus;
    for (const auto& id : chosen) gpus.insert(id.substr(0, id.find("::")));
    ::_exit(chosen.size() == 4 && gpus.size() == 4 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
