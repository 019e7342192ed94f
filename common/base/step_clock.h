// Wall and CPU time of the steps of one call, for its debug log line (and scripts/bench.sh,
// which reads that line): each mark() closes the step that ran since the previous mark, or
// since the clock was made. Reading the clocks costs well under a microsecond per mark.
#pragma once

#include <array>
#include <cstddef>
#include <ctime>
#include <string>
#include <string_view>

namespace gcr {

class StepClock {
 public:
  StepClock();
  // `step` names what ran since the previous mark; a string literal (it is kept, not copied).
  // Marks past the eighth are not kept.
  void mark(const char* step);
  // "configuration 0.160/0.100, request 0.052/0.050, ... (ms wall/CPU)"; "" with no mark.
  [[nodiscard]] std::string summary() const;
  // Whether a mark named `step` was kept.
  [[nodiscard]] bool marked(std::string_view step) const;

 private:
  struct Step {
    const char* name = nullptr;
    double wall_ms = 0;
    double cpu_ms = 0;
  };
  std::array<Step, 8> steps_{};
  std::size_t count_ = 0;
  timespec wall_{};
  timespec cpu_{};
};

}  // namespace gcr
