#include "labels/labels_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxLabelsFileBytes = 1 << 20;

// The file's stamp now; nothing when it is missing.
std::optional<PathStamp> stamp_now(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return stamp_of(path, st);
}

}  // namespace

Result<bool> LabelsFile::keep(const std::string& text) {
  const auto now = stamp_now(path_);
  if (!now || !seen_ || !seen_->holds(*now)) {
    on_disk_.reset();
    if (now) {
      if (auto current = read_regular_file(path_, kMaxLabelsFileBytes)) on_disk_ = *current;
    }
    seen_ = now;
  }
  if (on_disk_ == text) return false;
  const std::string dir = dirname_of(path_);
  if (auto s = make_directories(dir); !s)
    return s.error().wrap("cannot write the labels file " + path_);
  auto fd = open_directory(dir);
  if (!fd) return fd.error().wrap("cannot write the labels file " + path_);
  if (auto s = write_file_atomic_at(fd->get(), basename_of(path_), text, FileOwner{0644}); !s)
    return s.error().wrap("cannot write the labels file " + path_);
  on_disk_ = text;
  seen_ = stamp_now(path_);
  return true;
}

Result<bool> LabelsFile::remove() {
  on_disk_.reset();
  seen_.reset();
  if (::unlink(path_.c_str()) == 0) return true;
  if (errno == ENOENT) return false;
  return Error{"cannot remove the labels file " + path_ + ": " + errno_text(errno)};
}

}  // namespace gcr
