// A GPU fixture whose [cdi] spec-dirs holds a spec `gpu-ctk cdi generate` wrote for its
// simulated host, and a way to run gpu-ctk with its configuration.
#pragma once

#include <string>
#include <vector>

#include "gpu_fixture.h"

namespace gcr::test {

struct CdiFixture : GpuFixture {
  std::string spec_dir = path("cdi");

  explicit CdiFixture(const Json& extra_config = Json::object());
  [[nodiscard]] ProcessResult ctk(std::vector<std::string> args) const;
};

}  // namespace gcr::test
