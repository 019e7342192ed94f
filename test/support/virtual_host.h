// An in-memory host for driver discovery (as ninja's tests use a virtual disk): files,
// directories and character devices at absolute host paths, each with an owner and a mode,
// served through the seams discovery reads the host by (HostFs, FileTrust, NodeStatFn), so
// gather_edits and apply_gathered_edits run in unit tests without root. No symlinks; every
// filesystem is writable; the loader configuration names no directory.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "base/node_stat.h"
#include "base/trust.h"
#include "driver/host_fs.h"

namespace gcr::test {

class VirtualHost final : public HostFs, public FileTrust {
 public:
  // A regular file and the directories above it (root's, 0755).
  void add_file(const std::string& path, std::string content, mode_t mode = 0644, uid_t uid = 0);
  // A character device node, root's.
  void add_char_device(const std::string& path, unsigned major, unsigned minor, mode_t mode = 0666);
  void remove(const std::string& path);
  // For DriverHost and apply_edits: the nodes' lstat.
  [[nodiscard]] NodeStatFn node_stat() const;

  Result<std::string> read_file(const std::string& path, std::size_t max_bytes) override;
  std::vector<std::string> list(const std::string& dir) override;
  bool lstat(const std::string& path, struct stat& st) override;
  bool stat(const std::string& path, struct stat& st) override;
  std::string head(const std::string& path, std::size_t size) override;
  bool read_only_fs(const std::string& path) override;
  Result<std::string> resolve_in_root(const std::string& root, const std::string& path) override;
  Result<LoaderConf> loader_conf(const std::string& root) override;
  // The file's own verdict (owned_by_root_only), its directories taken as trusted.
  Status file(const std::string& path, struct stat& st) override;
  Status program(const std::string& path) override;

 private:
  struct Entry {
    mode_t mode = 0;  // type and permissions
    uid_t uid = 0;
    unsigned major = 0;
    unsigned minor = 0;
    std::string content;
  };
  void directories_above(const std::string& path);
  const Entry* find(const std::string& path) const;
  std::map<std::string, Entry> entries_;
};

// The first 20 bytes of a 64-bit x86 ELF file: what discovery reads of a library or program.
[[nodiscard]] std::string elf64_header();

}  // namespace gcr::test
