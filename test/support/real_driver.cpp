#include "real_driver.h"

#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "test_support.h"

namespace gcr::test {

const std::string& real_driver_layouts() {
  static const std::string dir = [] {
    if (const char* set = std::getenv("GCR_REAL_DRIVER"); set != nullptr && *set != '\0')
      return std::string(set);
    const auto r = run({GCR_TEST_SOURCE_DIR "/test/real-driver.sh"});
    if (r.exit_code != 0) throw std::runtime_error("test/real-driver.sh failed: " + r.err);
    std::cerr << r.err;
    std::string out = r.out;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out.substr(out.rfind('\n') + 1);
  }();
  return dir;
}

std::string real_driver_version() {
  const std::string ready = read_file(real_driver_layouts() + "/../ready");
  return ready.substr(0, ready.find('\n'));
}

}  // namespace gcr::test
