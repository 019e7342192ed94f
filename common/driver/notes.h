// What discovery refused or could not find that a container may miss (a refused library, a
// device the driver does not list): one line each, each kept once, for the caller to log.
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

 private:
  std::vector<std::string> lines_;
};

}  // namespace gcr
