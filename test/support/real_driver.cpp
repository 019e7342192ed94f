#include "real_driver.h"

#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "test_support.h"

namespace gcr::test {

namespace {

// $`variable`, or the directory test/`script` fetches or finds in its cache (its last line).
std::string fetched(const char* variable, const std::string& script) {
  if (const char* set = std::getenv(variable); set != nullptr && *set != '\0')
    return std::string(set);
  const auto r = run({std::string(GCR_TEST_SOURCE_DIR) + "/test/" + script});
  if (r.exit_code != 0) throw std::runtime_error("test/" + script + " failed: " + r.err);
  std::cerr << r.err;
  std::string out = r.out;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out.substr(out.rfind('\n') + 1);
}

}  // namespace

const std::string& real_driver_layouts() {
  static const std::string dir = fetched("GCR_REAL_DRIVER", "real-driver.sh");
  return dir;
}

const std::string& newer_engines() {
  static const std::string dir = fetched("GCR_NEWER_ENGINES", "newer-engines.sh");
  return dir;
}

std::string real_driver_version() {
  const std::string ready = read_file(real_driver_layouts() + "/../ready");
  return ready.substr(0, ready.find('\n'));
}

}  // namespace gcr::test
