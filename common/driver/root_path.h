// Path resolution inside a host directory tree that stands for "/" (the driver root, the dev
// root): symlinks are followed as if the tree were chroot'ed, so nothing outside it is named.
// This works on strings and is meant for trusted, root-owned trees; container rootfs work
// goes through the fd-based resolver in rootfs.h instead.
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/fs.h"
#include "base/result.h"

namespace gcr {

// The most symlinks one path may lead through, as Linux allows.
constexpr int kMaxSymlinks = 40;

// The parts of `path` put ahead of those in `todo`, in order, without empty and "." parts.
void push_path_parts(std::deque<std::string>& todo, std::string_view path);

// The target of the symlink at a host path; an error for one longer than 4096 bytes (never a
// truncated name).
[[nodiscard]] Result<std::string> read_link(const std::string& host_path);

// The in-root absolute path `path` leads to ("/usr/lib/libcuda.so.1" ->
// "/usr/lib/libcuda.so.550.54.15"), following at most 40 symlinks. Errors when a component is
// missing or the budget runs out.
[[nodiscard]] Result<std::string> resolve_in_root(const std::string& root, std::string_view path);

// Where a resolution stands: the in-root path so far ("" is the root) and the symlinks it may
// still follow.
struct RootResolution {
  std::string resolved;
  int links_left = kMaxSymlinks;
};

// resolve_in_root's work on `path` continued from `from`, so that a caller can keep where a
// resolution stands after each part of a path and go on from there.
[[nodiscard]] Result<RootResolution> resolve_in_root_from(const std::string& root,
                                                          RootResolution from,
                                                          std::string_view path);

// resolve_in_root for one root, each answer remembered. A path that resolves costs one
// openat2(RESOLVE_IN_ROOT) and a readlink of its /proc/self/fd name; one that does not (or a
// kernel without openat2) is walked part by part, each leading part resolved once, so that
// the error names the part that failed as resolve_in_root names it.
class RootResolver {
 public:
  explicit RootResolver(std::string root) : root_(std::move(root)) {}
  [[nodiscard]] Result<std::string> resolve(const std::string& path);

 private:
  // The in-root path the kernel resolves `path` to; nullopt when it cannot say.
  std::optional<std::string> by_kernel(const std::string& path);
  Result<std::string> by_parts(const std::string& path);
  static constexpr std::size_t kMaxRemembered = 4096;

  std::string root_;
  std::optional<Fd> root_fd_;  // opened on first use; invalid when the root cannot be opened
  std::string real_root_;      // its name in /proc/self/fd, without a trailing slash
  std::map<std::string, Result<std::string>> answers_;
  std::map<std::string, Result<RootResolution>> parts_;  // after each leading part, as written
};

}  // namespace gcr
