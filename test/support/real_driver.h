// NVIDIA's real userspace driver from Debian's non-free archive, laid out by
// test/real-driver.sh (downloaded once, then cached outside the checkout).
#pragma once

#include <string>

namespace gcr::test {

// The directory holding the debian/ and flat/ driver roots: $GCR_REAL_DRIVER, or what
// test/real-driver.sh builds or finds in its cache (throws when it cannot).
[[nodiscard]] const std::string& real_driver_layouts();
// The driver's version ("535.261.03").
[[nodiscard]] std::string real_driver_version();

}  // namespace gcr::test
