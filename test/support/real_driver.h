// What the tests fetch from Debian's archive, downloaded once and then cached outside the
// checkout: NVIDIA's real userspace driver from the non-free part, laid out by
// test/real-driver.sh, and newer engines (test/newer-engines.sh).
#pragma once

#include <string>

namespace gcr::test {

// The directory holding the debian/, flat/ and nvidia/ driver roots: $GCR_REAL_DRIVER, or what
// test/real-driver.sh builds or finds in its cache (throws when it cannot).
[[nodiscard]] const std::string& real_driver_layouts();
// The driver's version ("535.261.03").
[[nodiscard]] std::string real_driver_version();

// The directory holding trixie/ and sid/, each a root/ of containerd and Docker unpacked from
// that Debian release: $GCR_NEWER_ENGINES, or what test/newer-engines.sh fetches or finds in its
// cache (throws when it cannot).
[[nodiscard]] const std::string& newer_engines();

}  // namespace gcr::test
