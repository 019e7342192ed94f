// Golden before/after config.json pairs: test/data/golden/<case>/input.json through the shim
// on the simulated host must give expected.json (host paths written as @DRIVER_ROOT@,
// @DEV_ROOT@ and @GPU_CTK@). GCR_UPDATE_GOLDEN=1 rewrites expected.json and fails the run,
// so that the new files are reviewed before a run without it passes.
#include <doctest/doctest.h>

#include <boost/filesystem.hpp>
#include <cstdlib>

#include "gpu_fixture.h"

using gcr::Json;

namespace {

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

}  // namespace

TEST_CASE("golden config.json pairs") {
  REQUIRE_MESSAGE(gcr::test::is_root(), "the simulated GPU host needs root (mknod)");
  const std::string dir = gcr::test::test_source("data/golden");
  const bool update = std::getenv("GCR_UPDATE_GOLDEN") != nullptr;
  int cases = 0;
  for (const auto& entry : boost::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    gcr::test::GpuFixture f;
    const std::string input = gcr::test::read_file(entry.path().string() + "/input.json");
    f.write_spec(input);
    const auto result = f.shim({"create", "--bundle", f.bundle(), "golden"});
    REQUIRE(result.err == "");
    const auto placeholders = [&](std::string text, bool to_placeholder) {
      const std::pair<std::string, std::string> map[] = {
          {"@DRIVER_ROOT@", f.host().driver_root()},
          {"@DEV_ROOT@", f.host().dev_root()},
          {"@GPU_CTK@", gcr::test::built("gpu-ctk")}};
      for (const auto& [key, value] : map)
        text = to_placeholder ? replace_all(text, value, key) : replace_all(text, key, value);
      return text;
    };
    const std::string output = gcr::test::read_file(f.spec_path());
    const std::string expected_path = entry.path().string() + "/expected.json";
    if (name == "no-request") CHECK(output == input);
    if (update)
      gcr::test::write_file(expected_path, placeholders(output, true));
    else
      CHECK(Json::parse(output) ==
            Json::parse(placeholders(gcr::test::read_file(expected_path), false)));
    ++cases;
  }
  CHECK(cases >= 4);
  if (update)
    FAIL("GCR_UPDATE_GOLDEN is set: rewrote expected.json of "
         << cases << " cases in " << dir
         << "; review the changes (git diff) and run again without GCR_UPDATE_GOLDEN");
}
