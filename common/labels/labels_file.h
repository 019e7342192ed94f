// The labels file: written atomically (temp + fsync + rename), and only when its content
// changes, so its inode and mtime stay while the labels do. One removed or changed by someone
// else is written again.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "discovery_cache/path_stamps.h"

namespace gcr {

class LabelsFile {
 public:
  explicit LabelsFile(std::string path) : path_(std::move(path)) {}

  [[nodiscard]] const std::string& path() const { return path_; }

  // Makes the file hold `text` (its directories created): true when it was written, false
  // when it held that already. What it holds is read again only when its stat changed since
  // (one lstat a call otherwise).
  [[nodiscard]] Result<bool> keep(const std::string& text);
  // Removes the file: true when there was one.
  [[nodiscard]] Result<bool> remove();

 private:
  std::string path_;
  std::optional<std::string> on_disk_;  // what we know the file holds
  std::optional<PathStamp> seen_;       // the file as it was when on_disk_ was learnt
};

}  // namespace gcr
