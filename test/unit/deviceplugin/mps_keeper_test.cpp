#include <doctest/doctest.h>

#include "deviceplugin/mps_keeper.h"

using gcr::Config;
using gcr::mps_daemons_carry_over;

TEST_CASE("MPS daemons carry over a configuration change only with MPS, its root and driver") {
  Config before;
  before.device_plugin.sharing = "mps";
  before.device_plugin.mps_root = "/run/nvidia/mps";
  Config after = before;
  after.device_plugin.device_list = {"volume-mounts"};
  after.device_plugin.replicas = 7;  // want() replaces the daemons of groups no longer given
  CHECK(mps_daemons_carry_over(before, after));

  Config other_root = after;
  other_root.device_plugin.mps_root = "/var/lib/mps";
  CHECK_FALSE(mps_daemons_carry_over(before, other_root));
  Config other_driver = after;
  other_driver.driver.root = "/run/nvidia/driver";
  CHECK_FALSE(mps_daemons_carry_over(before, other_driver));
  Config time_slicing = after;
  time_slicing.device_plugin.sharing = "time-slicing";
  CHECK_FALSE(mps_daemons_carry_over(before, time_slicing));
  CHECK_FALSE(mps_daemons_carry_over(time_slicing, before));
}
