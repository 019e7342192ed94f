#include "base/step_clock.h"

#include <cstdio>

namespace gcr {
namespace {

timespec now(clockid_t clock) {
  timespec t{};
  ::clock_gettime(clock, &t);
  return t;
}

double ms_between(const timespec& from, const timespec& to) {
  return static_cast<double>(to.tv_sec - from.tv_sec) * 1e3 +
         static_cast<double>(to.tv_nsec - from.tv_nsec) / 1e6;
}

}  // namespace

StepClock::StepClock() : wall_(now(CLOCK_MONOTONIC)), cpu_(now(CLOCK_PROCESS_CPUTIME_ID)) {}

void StepClock::mark(const char* step) {
  const timespec wall = now(CLOCK_MONOTONIC);
  const timespec cpu = now(CLOCK_PROCESS_CPUTIME_ID);
  if (count_ < steps_.size()) {
    steps_[count_++] = Step{step, ms_between(wall_, wall), ms_between(cpu_, cpu)};
  }
  wall_ = wall;
  cpu_ = cpu;
}

std::string StepClock::summary() const {
  std::string text;
  for (std::size_t i = 0; i < count_; ++i) {
    char figures[64];
    std::snprintf(figures, sizeof figures, " %.3f/%.3f", steps_[i].wall_ms, steps_[i].cpu_ms);
    text += (i == 0 ? "" : ", ") + std::string(steps_[i].name) + figures;
  }
  return text.empty() ? text : text + " (ms wall/CPU)";
}

bool StepClock::marked(std::string_view step) const {
  for (std::size_t i = 0; i < count_; ++i) {
    if (steps_[i].name == step) return true;
  }
  return false;
}

}  // namespace gcr
