#include "labels/labels_file.h"

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxLabelsFileBytes = 1 << 20;

}  // namespace

Result<bool> LabelsFile::keep(const std::string& text) {
  if (!on_disk_) {
    if (auto current = read_regular_file(path_, kMaxLabelsFileBytes)) on_disk_ = *current;
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
  return true;
}

}  // namespace gcr
