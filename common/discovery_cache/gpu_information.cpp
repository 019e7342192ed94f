#include "discovery_cache/gpu_information.h"

#include <sys/stat.h>

#include <ctime>

#include "discovery_cache/path_stamps.h"

namespace gcr {

Result<std::string> KeptGpuInformation::read(
    const std::string& path, const std::function<Result<std::string>()>& read_live) {
  if (state_dir_.empty()) return read_live();
  const std::string dir = state_dir_ + "/discovery";
  const std::string key = "gpu information " + path + "\n";
  if (auto kept = load_stamped(dir, key)) return kept;
  const timespec started = now_();
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return read_live();
  const PathStamp before = stamp_of(path, st);
  auto text = read_live();
  // The file read is the one stamped: the same before and after.
  if (text && !changed_path({before}))
    (void)store_stamped(dir, key, {{before}, {}, *text}, started);
  return text;
}

}  // namespace gcr
