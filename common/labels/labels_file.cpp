#include "labels/labels_file.h"

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxLabelsFileBytes = 1 << 20;

std::optional<struct stat> stat_of(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return st;
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_mode == b.st_mode &&
         a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_ctim.tv_sec == b.st_ctim.tv_sec &&
         a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

}  // namespace

Result<bool> LabelsFile::keep(const std::string& text) {
  const auto now = stat_of(path_);
  if (!now || !seen_ || !same_file(*now, *seen_)) {
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
  seen_ = stat_of(path_);
  return true;
}

}  // namespace gcr
