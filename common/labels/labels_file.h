// The labels file: written atomically (temp + fsync + rename), and only when its content
// changes, so its inode and mtime stay while the labels do; never removed.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"

namespace gcr {

class LabelsFile {
 public:
  explicit LabelsFile(std::string path) : path_(std::move(path)) {}

  [[nodiscard]] const std::string& path() const { return path_; }

  // Makes the file hold `text` (its directories created): true when it was written, false
  // when it held that already.
  [[nodiscard]] Result<bool> keep(const std::string& text);

 private:
  std::string path_;
  std::optional<std::string> on_disk_;  // what we know the file holds
};

}  // namespace gcr
