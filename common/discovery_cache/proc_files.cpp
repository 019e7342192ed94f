#include "discovery_cache/proc_files.h"

#include <sys/stat.h>

#include <optional>

#include "discovery_cache/path_stamps.h"

namespace gcr {
namespace {

// The path's stamp now, every field compared; nothing when it is not there.
std::optional<PathStamp> whole_stamp(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  PathStamp stamp = stamp_of(path, st);
  stamp.whole = true;
  return stamp;
}

std::string key_of(const std::string& path, const std::vector<std::string>& anchors) {
  std::string key = "proc file " + path + "\n";
  for (const auto& anchor : anchors) key += "anchor " + anchor + "\n";
  return key;
}

}  // namespace

Result<std::string> KeptProcFiles::read(const std::string& path,
                                        const std::vector<std::string>& anchors,
                                        const std::function<Result<std::string>()>& read_live) {
  if (state_dir_.empty()) return read_live();
  const std::string dir = state_dir_ + "/discovery";
  const std::string key = key_of(path, anchors);
  if (const Fd* dir_fd = kept_directory()) {
    if (auto kept = load_stamped(*dir_fd, dir, key)) return kept;
  }
  const timespec started = now_();
  std::vector<PathStamp> stamps;
  for (const auto& p : anchors) {
    if (auto stamp = whole_stamp(p)) stamps.push_back(std::move(*stamp));
  }
  auto own = whole_stamp(path);
  if (!own || !S_ISREG(own->mode) || stamps.size() != anchors.size()) return read_live();
  stamps.push_back(std::move(*own));
  auto text = read_live();
  // What was read is what was stamped: the same before and after.
  if (text && !changed_path(stamps)) (void)store_stamped(dir, key, {stamps, {}, *text}, started);
  return text;
}

const Fd* KeptProcFiles::kept_directory() {
  if (!kept_directory_.valid()) {
    auto opened = open_kept_directory(state_dir_ + "/discovery");
    if (!opened) return nullptr;
    kept_directory_ = std::move(*opened);
  }
  return &kept_directory_;
}

}  // namespace gcr
