// How the shim turns qualified CDI names into container edits: it asks
// `gpu-ctk cdi resolve` (which reads the spec directories, JSON and YAML) and reads back the
// merged containerEdits, so YAML parsing never weighs on the shim's own start-up.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "edits/edits.h"

namespace gcr {

class CdiResolver {
 public:
  virtual ~CdiResolver() = default;
  [[nodiscard]] virtual Result<ContainerEdits> resolve(const std::vector<std::string>& names) = 0;
};

class CtkCdiResolver : public CdiResolver {
 public:
  explicit CtkCdiResolver(const Config& config) : config_(config) {}
  Result<ContainerEdits> resolve(const std::vector<std::string>& names) override;

 private:
  const Config& config_;
};

}  // namespace gcr
