// Driver discovery read through a recorder: every answer is the host's (`fs` and `trust`), and
// every path asked about is stamped in a ConsultedPaths before it is read, so that what
// discovery found can be kept with the stamps of what it depended on.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/trust.h"
#include "discovery_cache/path_stamps.h"
#include "driver/host_fs.h"

namespace gcr {

// A read-only-filesystem answer discovery depended on (a mount's flags have no stamp).
struct ReadOnlyAnswer {
  std::string path;
  bool read_only = false;
};

class RecordingHost final : public HostFs, public FileTrust {
 public:
  RecordingHost(HostFs& fs, FileTrust& trust) : fs_(fs), trust_(trust) {}

  Result<std::string> read_file(const std::string& path, std::size_t max_bytes) override;
  std::vector<std::string> list(const std::string& dir) override;
  bool lstat(const std::string& path, struct stat& st) override;
  bool stat(const std::string& path, struct stat& st) override;
  std::string head(const std::string& path, std::size_t size) override;
  bool read_only_fs(const std::string& path) override;
  Result<std::string> resolve_in_root(const std::string& root, const std::string& path) override;
  Result<LoaderConf> loader_conf(const std::string& root) override;
  Status file(const std::string& path, struct stat& st) override;
  Status program(const std::string& path) override;

  [[nodiscard]] const ConsultedPaths& consulted() const { return consulted_; }
  [[nodiscard]] std::vector<ReadOnlyAnswer> read_only_answers() const;
  // False when an answer depended on more than the paths stamped: a failure the stamps do not
  // explain (no memory or descriptors, an I/O error, a short read), or a loader configuration
  // that could not be read to the end.
  [[nodiscard]] bool complete() const { return complete_; }

 private:
  HostFs& fs_;
  FileTrust& trust_;
  ConsultedPaths consulted_;
  std::map<std::string, bool> read_only_;
  bool complete_ = true;
};

}  // namespace gcr
