// A dockerd on temporary paths (its own data, exec root, pidfile and socket; no bridge, no
// iptables, the vfs storage driver), stopped with the object, and the docker CLI against it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "test_support.h"

namespace gcr::test {

class Dockerd {
 public:
  // Lives under `dir`, reads `daemon_json`; `bin` is searched first in its PATH (another
  // release's unpacked programs, or compatibility names of ours), then `programs` (where
  // dockerd and docker are). `extra` is appended to dockerd's arguments.
  Dockerd(const std::string& dir, const std::string& daemon_json, const std::string& bin,
          const std::string& programs = "/usr", const std::vector<std::string>& extra = {});

  [[nodiscard]] ProcessResult docker(std::vector<std::string> args) const;
  // Waits until `docker info` answers and its default runtime is `runtime`; the log on failure.
  [[nodiscard]] bool wait_until_serving(const std::string& runtime) const;
  [[nodiscard]] std::string log() const;

 private:
  std::string dir_;
  std::string programs_;
  std::string socket_;
  std::unique_ptr<Daemon> daemon_;
};

}  // namespace gcr::test
