#include <doctest/doctest.h>
#include <time.h>

#include <regex>
#include <string>

#include "base/step_clock.h"

namespace {

// Burns about `ms` of CPU time (what the process clock counts).
void spin_for_cpu(double ms) {
  timespec start{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &start);
  for (;;) {
    timespec t{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    if (static_cast<double>(t.tv_sec - start.tv_sec) * 1e3 +
            static_cast<double>(t.tv_nsec - start.tv_nsec) / 1e6 >=
        ms)
      return;
  }
}

double figure(const std::string& summary, const std::string& step, int which) {
  std::smatch m;
  REQUIRE(std::regex_search(summary, m, std::regex(step + " ([0-9.]+)/([0-9.]+)")));
  return std::stod(m[which].str());
}

}  // namespace

TEST_CASE("StepClock says nothing before a mark") {
  CHECK(gcr::StepClock().summary().empty());
}

TEST_CASE("StepClock gives each step the wall and CPU time since the previous mark") {
  gcr::StepClock clock;
  clock.mark("configuration");
  spin_for_cpu(20);
  clock.mark("discovery");
  const timespec nap{0, 20'000'000};
  ::nanosleep(&nap, nullptr);
  clock.mark("write");
  const std::string summary = clock.summary();
  CHECK(std::regex_match(summary,
                         std::regex("configuration [0-9.]+/[0-9.]+, discovery [0-9.]+/[0-9.]+, "
                                    "write [0-9.]+/[0-9.]+ \\(ms wall/CPU\\)")));
  CHECK(figure(summary, "discovery", 2) >= 20);  // CPU spent in that step
  CHECK(figure(summary, "discovery", 1) >= 20);
  CHECK(figure(summary, "write", 1) >= 20);  // asleep: wall time, next to no CPU
  CHECK(figure(summary, "write", 2) < 10);
  CHECK(figure(summary, "configuration", 1) < 10);
}

TEST_CASE("StepClock keeps its first eight steps only") {
  gcr::StepClock clock;
  const char* names[] = {"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10"};
  for (const char* name : names) clock.mark(name);
  const std::string summary = clock.summary();
  CHECK(summary.find("s8 ") != std::string::npos);
  CHECK(summary.find("s9 ") == std::string::npos);
  CHECK(summary.find("s10") == std::string::npos);
  CHECK(clock.marked("s8"));
  CHECK_FALSE(clock.marked("s9"));
  CHECK_FALSE(clock.marked("s"));
  CHECK_FALSE(gcr::StepClock().marked("s1"));
}
