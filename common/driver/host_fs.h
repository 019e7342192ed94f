// The filesystem as driver discovery reads it: the seam between DeviceNodes / DriverRootFiles
// and the host, so that unit tests can give discovery an in-memory host (test/support's
// VirtualHost) and run without root. SystemFs is the real one; each of its methods is the
// system call or base/ function discovery made before the seam.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "driver/root_path.h"

namespace gcr {

// A tree's loader configuration as discovery uses it.
struct LoaderConf {
  std::vector<std::string> directories;  // the directories named, in ldconfig's order
  std::vector<std::string> consulted;    // in-root: etc/ld.so.conf and each file it includes
  std::vector<std::string> listed;       // in-root: each directory an include line lists
};

class HostFs {
 public:
  virtual ~HostFs() = default;

  // A whole regular file, as read_regular_file (base/fs.h) reads it.
  [[nodiscard]] virtual Result<std::string> read_file(const std::string& path,
                                                      std::size_t max_bytes) = 0;
  // The names in a directory, sorted; none when it cannot be listed.
  [[nodiscard]] virtual std::vector<std::string> list(const std::string& dir) = 0;
  // lstat(2) and stat(2): false, with errno set, when they fail.
  virtual bool lstat(const std::string& path, struct stat& st) = 0;
  virtual bool stat(const std::string& path, struct stat& st) = 0;
  // The first `size` bytes of a file, read once; fewer when it is shorter or cannot be read.
  [[nodiscard]] virtual std::string head(const std::string& path, std::size_t size) = 0;
  // Whether the filesystem holding `path` is known to be mounted read-only.
  [[nodiscard]] virtual bool read_only_fs(const std::string& path) = 0;
  // resolve_in_root (driver/root_path.h) in the tree at `root`: where `path` leads there.
  [[nodiscard]] virtual Result<std::string> resolve_in_root(const std::string& root,
                                                            const std::string& path) = 0;
  // The loader configuration of the tree at `root` (etc/ld.so.conf and the files it includes,
  // hooks/ld_so_conf.h).
  [[nodiscard]] virtual Result<LoaderConf> loader_conf(const std::string& root) = 0;
};

class SystemFs final : public HostFs {
 public:
  Result<std::string> read_file(const std::string& path, std::size_t max_bytes) override;
  std::vector<std::string> list(const std::string& dir) override;
  bool lstat(const std::string& path, struct stat& st) override;
  bool stat(const std::string& path, struct stat& st) override;
  std::string head(const std::string& path, std::size_t size) override;
  bool read_only_fs(const std::string& path) override;
  // Each root's answers remembered (RootResolver: openat2 in the root, the parts walked when
  // that fails).
  Result<std::string> resolve_in_root(const std::string& root, const std::string& path) override;
  Result<LoaderConf> loader_conf(const std::string& root) override;

 private:
  std::map<std::string, RootResolver> resolvers_;
};

}  // namespace gcr
