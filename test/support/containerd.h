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
  // `bin` holds containerd, its runc shim and ctr (another release's, unpacked: the daemon finds
  // its shim there first).
  Containerd(const std::string& dir, const RunOptions& env, const std::string& bin = "/usr/bin");

  [[nodiscard]] ProcessResult ctr(const std::vector<std::string>& args,
                                  const RunOptions& options = {}) const;
  // ctr run of `script` (sh -c) through our shim (--runc-binary), in a busybox rootfs made in
  // `bundle`, with `env` (NAME=VALUE).
  [[nodiscard]] ProcessResult run_through_shim(const std::string& bundle,
                                               const std::vector<std::string>& env,
                                               const std::string& script) const;
  [[nodiscard]] const std::string& socket() const { return socket_; }

 private:
  std::string dir_;
  std::string bin_;
  std::string socket_;
  std::unique_ptr<Daemon> daemon_;
};

}  // namespace gcr::test
