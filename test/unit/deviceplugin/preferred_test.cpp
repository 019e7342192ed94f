#include <doctest/doctest.h>

#include "deviceplugin/preferred.h"

using gcr::PluginDevice;
using Ids = std::vector<std::string>;

namespace {

// GPUs 0-1 on NUMA node 0, 2-3 on node 1, 4 without NUMA information.
std::vector<PluginDevice> five() {
  std::vector<PluginDevice> out;
  for (int i = 0; i < 5; ++i) {
    PluginDevice d;
    d.id = d.gpu_id = std::to_string(i);
    d.uuid = "GPU-" + d.id;
    if (i < 4) d.numa = i / 2;
    out.push_back(d);
  }
  return out;
}

Ids pick(const Ids& available, const Ids& must, int size) {
  return gcr::preferred_allocation({available, must, size}, five(), gcr::Config{});
}

}  // namespace

TEST_CASE("exactly size IDs from available, must_include first, its NUMA node next") {
  CHECK(pick({"0", "1", "2", "3"}, {"3"}, 2) == Ids{"3", "2"});
  CHECK(pick({"0", "1", "2", "3"}, {}, 2) == Ids{"0", "1"});
  CHECK(pick({"0", "2", "3"}, {}, 2) == Ids{"2", "3"});
  CHECK(pick({"0", "2", "3", "4"}, {"0"}, 3) == Ids{"0", "2", "3"});
  CHECK(pick({"0", "1", "2", "3", "4"}, {}, 5).size() == 5);
}

TEST_CASE("what cannot be answered is an empty answer, never an error") {
  CHECK(pick({"0", "1"}, {"3"}, 2).empty());       // must_include not available
  CHECK(pick({"0", "1"}, {"0", "1"}, 1).empty());  // must_include larger than size
  CHECK(pick({"0", "1"}, {}, 3).empty());          // too few devices
  CHECK(pick({"0", "9"}, {}, 2).empty());          // unknown IDs are not candidates
  CHECK(pick({}, {}, 0).empty());
}
