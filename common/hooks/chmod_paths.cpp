#include "hooks/chmod_paths.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "base/text.h"

namespace gcr {

Result<mode_t> parse_chmod_mode(const std::string& text) {
  const bool octal =
      !text.empty() && text.size() <= 5 && text.find_first_not_of("01234567") == std::string::npos;
  const unsigned long mode = octal ? std::stoul(text, nullptr, 8) : 0;
  if (!octal || mode > 07777) return Error{"--mode " + quote(text, 64) + " is no octal mode"};
  return static_cast<mode_t>(mode);
}

Status chmod_in_root(const RootFs& root, const std::vector<std::string>& paths, mode_t mode) {
  for (const auto& path : paths) {
    if (path.empty() || path.front() != '/') return Error{"not an absolute path: " + quote(path)};
    auto found = root.open_across_mounts(path, O_PATH);
    if (!found) return found.error().wrap("cannot change the mode of " + path);
    if (!*found) continue;
    // A descriptor opened with O_PATH takes no fchmod; its /proc/self/fd link names the inode.
    const std::string inode = "/proc/self/fd/" + std::to_string((*found)->get());
    if (::chmod(inode.c_str(), mode) != 0)
      return Error{"cannot change the mode of " + path + ": " + errno_text(errno)};
  }
  return {};
}

}  // namespace gcr
