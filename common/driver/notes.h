// What discovery refused or could not find that a container may miss (a refused library, a
// device the driver does not list): one line each, each kept once, for the caller to log as a
// warning; and how discovery went (the discovery cache used or kept), to log at debug level.
// Both halves of discovery (DeviceNodes, DriverRootFiles) write to the one their DriverHost
// owns; gather_edits takes them.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace gcr {

class Notes {
 public:
  void add(std::string line) {
    if (std::find(lines_.begin(), lines_.end(), line) == lines_.end())
      lines_.push_back(std::move(line));
  }
  [[nodiscard]] std::vector<std::string> take() { return std::exchange(lines_, {}); }
  void add_debug(std::string line) { debug_lines_.push_back(std::move(line)); }
  [[nodiscard]] std::vector<std::string> take_debug() { return std::exchange(debug_lines_, {}); }

 private:
  std::vector<std::string> lines_;
  std::vector<std::string> debug_lines_;
};

}  // namespace gcr
