#include "discovery_cache/recording_host.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <utility>

#include "base/fs.h"

namespace gcr {
namespace {

// Whether a failed look-up is explained by the paths stamped (a name not there, a part that is
// no directory, a link loop), not by something passing (no memory, no descriptors, I/O).
bool explained(int err) {
  return err == ENOENT || err == ENOTDIR || err == ELOOP;
}

}  // namespace

Result<std::string> RecordingHost::read_file(const std::string& path, std::size_t max_bytes) {
  consulted_.host(path, true);
  auto text = fs_.read_file(path, max_bytes);
  if (text) return text;
  // Not there, not a regular file, too large: all in the stamps; anything else is not.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0
          ? S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) <= max_bytes
          : !explained(errno))
    complete_ = false;
  return text;
}

std::vector<std::string> RecordingHost::list(const std::string& dir) {
  consulted_.host(dir, true, true);
  auto names = fs_.list(dir);
  if (names.empty()) {
    const Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid() && !explained(errno)) complete_ = false;
  }
  return names;
}

bool RecordingHost::lstat(const std::string& path, struct stat& st) {
  consulted_.host(path, false);
  const bool found = fs_.lstat(path, st);
  if (!found && !explained(errno)) complete_ = false;
  return found;
}

bool RecordingHost::stat(const std::string& path, struct stat& st) {
  consulted_.host(path, true);
  const bool found = fs_.stat(path, st);
  if (!found && !explained(errno)) complete_ = false;
  return found;
}

std::string RecordingHost::head(const std::string& path, std::size_t size) {
  consulted_.host(path, true);
  std::string bytes = fs_.head(path, size);
  struct stat st {};
  if (bytes.size() < size &&
      (::stat(path.c_str(), &st) != 0 || static_cast<std::size_t>(st.st_size) > bytes.size()))
    complete_ = false;
  return bytes;
}

bool RecordingHost::read_only_fs(const std::string& path) {
  consulted_.host(path, true);
  const bool read_only = fs_.read_only_fs(path);
  read_only_.try_emplace(path, read_only);
  return read_only;
}

Result<std::string> RecordingHost::resolve_in_root(const std::string& root,
                                                   const std::string& path) {
  consulted_.in_root(root, path);
  return fs_.resolve_in_root(root, path);
}

Result<LoaderConf> RecordingHost::loader_conf(const std::string& root) {
  // What every configuration starts from, stamped before it is read; the files it includes
  // after (each a whole stamp: a change while it was read shows in its ctime).
  consulted_.in_root(root, "/etc/ld.so.conf");
  consulted_.in_root(root, "/etc/ld.so.conf.d", true);
  auto conf = fs_.loader_conf(root);
  if (!conf) {
    complete_ = false;
    return conf;
  }
  for (const auto& path : conf->consulted) consulted_.in_root(root, path);
  for (const auto& dir : conf->listed) consulted_.in_root(root, dir, true);
  return conf;
}

Status RecordingHost::file(const std::string& path, struct stat& st) {
  consulted_.host(path, true);
  return trust_.file(path, st);
}

Status RecordingHost::program(const std::string& path) {
  consulted_.host(path, true);
  return trust_.program(path);
}

std::vector<ReadOnlyAnswer> RecordingHost::read_only_answers() const {
  std::vector<ReadOnlyAnswer> answers;
  for (const auto& [path, read_only] : read_only_) answers.push_back({path, read_only});
  return answers;
}

}  // namespace gcr
