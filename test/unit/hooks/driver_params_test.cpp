// The driver's parameters as a GPU container must see them: device-node modification off,
// everything else as the host's driver says.
#include <doctest/doctest.h>

#include "hooks/driver_params.h"

TEST_CASE("ModifyDeviceFiles: 1 becomes 0, every other line as it was") {
  const std::string host =
      "ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 1\nDeviceFileUID: 0\nDeviceFileGID: 0\n"
      "DeviceFileMode: 438\n";
  CHECK(gcr::without_device_node_modification(host) ==
        "ResmanDebugLevel: 4294967295\nModifyDeviceFiles: 0\nDeviceFileUID: 0\nDeviceFileGID: 0\n"
        "DeviceFileMode: 438\n");
  CHECK(gcr::without_device_node_modification("ModifyDeviceFiles: 1") == "ModifyDeviceFiles: 0");
}

TEST_CASE("nothing to hide: modification off already, or no such parameter") {
  for (const char* params :
       {"ModifyDeviceFiles: 0\nDeviceFileMode: 438\n", "DeviceFileUID: 0\n", "",
        "ModifyDeviceFiles: 10\n", " ModifyDeviceFiles: 1\n", "ModifyDeviceFiles: 1 \n"}) {
    CAPTURE(params);
    CHECK_FALSE(gcr::without_device_node_modification(params));
  }
}
