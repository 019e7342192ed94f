// A result kept between calls in a directory of its own (`[runtime] state-dir`/discovery),
// used only while every host path it was found from still has the stamp it had: as
// trustworthy as finding it again, for the price of an lstat per path.
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/fs.h"
#include "base/result.h"
#include "discovery_cache/path_stamps.h"
#include "discovery_cache/recording_host.h"

namespace gcr {

struct Stamped {
  std::vector<PathStamp> stamps;
  std::vector<ReadOnlyAnswer> read_only;
  std::string payload;
};

// A path changed this close to discovery (or after it started) may have changed again within
// its filesystem's timestamp granularity, unseen: a result depending on it is not kept.
constexpr time_t kRacyWindowSeconds = 2;

// The real time, as a discovery's start is taken.
[[nodiscard]] timespec realtime_now();

// The file's text and back: what it was kept for, the stamps, the read-only answers and the
// payload, every name exactly; nullopt for a text that is not one (or kept for another key).
[[nodiscard]] std::string write_stamped(const std::string& key, const Stamped& stamped);
[[nodiscard]] std::optional<Stamped> read_stamped(std::string_view data, const std::string& key);

// The payload kept in `dir` for `key`: only from a file of ours (owned by this user, not
// writable by others, one name) in a directory of ours, that holds `key`, and whose every stamp
// and read-only answer still holds. The error says why not ("none kept" when there is none).
[[nodiscard]] Result<std::string> load_stamped(const std::string& dir, const std::string& key);
// The same in `dir` opened by open_kept_directory, for a caller that loads several.
[[nodiscard]] Result<std::string> load_stamped(const Fd& dir_fd, const std::string& dir,
                                               const std::string& key);
// `dir` opened to load kept files from: ours and writable by nobody else. The error says why
// not ("nothing kept yet" when it is missing).
[[nodiscard]] Result<Fd> open_kept_directory(const std::string& dir);

// `dir` opened to keep files in: made 0700 when missing, ours and writable by nobody else, the
// directories above it only root's (or ours) to change. The error says why nothing can be kept.
[[nodiscard]] Result<Fd> store_directory(const std::string& dir);

// Keeps `stamped` in `dir` (made 0700 when missing) for `key`, unless a whole stamp's mtime or
// ctime is within kRacyWindowSeconds of `started` or later; a full directory is emptied first. The
// error says why nothing was kept.
[[nodiscard]] Status store_stamped(const std::string& dir, const std::string& key,
                                   const Stamped& stamped, timespec started);

}  // namespace gcr
