// A containerd daemon on temporary paths (CRI off: ctr needs only the core services), stopped
// with the object, and ctr against it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "test_support.h"

namespace gcr::test {

class Containerd {
 public:
  // Lives under `dir`; `env` is the daemon's environment (GPU_CONTAINER_RUNTIME_CONFIG).
  Containerd(const std::string& dir, const RunOptions& env);

  [[nodiscard]] ProcessResult ctr(const std::vector<std::string>& args,
                                  const RunOptions& options = {}) const;
  [[nodiscard]] const std::string& socket() const { return socket_; }

 private:
  std::string dir_;
  std::string socket_;
  std::unique_ptr<Daemon> daemon_;
};

}  // namespace gcr::test
