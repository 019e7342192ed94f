// bench-pairs N BASE... -- CANDIDATE...
// Runs the two commands N times each, in pairs whose order alternates (base first, then
// candidate first: whatever one run leaves behind for the next, such as a deleted container's
// teardown finishing in the background, falls on both sides alike), stdout/stderr to
// /dev/null. Prints the median wall time of each, the median of the per-pair ratios with its
// 95% confidence interval (distribution-free, from the order statistics) and the spread of single
// pairs (p10..p90), and the median of the per-pair differences (what the candidate adds, in ms).
//
// bench-pairs N [--goal G] BASE... -- CANDIDATE... --floor FLOOR...
// Rounds of three, in an order that cycles through all six: also prints the floor's ratio to
// the base, and the gap (the candidate's ratio minus the floor's, per round: its median and
// 95% interval), and whether the median gap is within the goal G.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace {

double run_once(std::vector<char*>& argv) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ) != 0) {
    std::perror(argv[0]);
    std::exit(2);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const auto end = std::chrono::steady_clock::now();
  posix_spawn_file_actions_destroy(&actions);
  return std::chrono::duration<double, std::milli>(end - start).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

// The 95% confidence interval of the median of `v`: the order statistics n/2 -+ 1.96 sqrt(n)/2
// (the normal approximation of the binomial; distribution-free).
std::pair<double, double> median_interval(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  const double half_width = 1.96 * std::sqrt(n) / 2;
  const auto rank = [&](double r) {
    return v[static_cast<std::size_t>(std::clamp(r, 0.0, n - 1))];
  };
  return {rank(std::floor(n / 2 - half_width)), rank(std::ceil(n / 2 + half_width) - 1)};
}

struct Commands {
  std::vector<char*> base, candidate, floor;
  double goal = -1;  // < 0: none
};

bool is(const char* arg, const char* word) {
  return std::string(arg) == word;
}

// Splits argv after N into the commands; false on a malformed command line.
bool parse_commands(int argc, char** argv, Commands& c) {
  int i = 2;
  if (i + 1 < argc && is(argv[i], "--goal")) {
    c.goal = std::atof(argv[i + 1]);
    i += 2;
  }
  std::vector<char*>* into = &c.base;
  for (; i < argc; ++i) {
    if (is(argv[i], "--") && into == &c.base) {
      into = &c.candidate;
    } else if (is(argv[i], "--floor") && into == &c.candidate) {
      into = &c.floor;
    } else {
      into->push_back(argv[i]);
    }
  }
  if (c.base.empty() || c.candidate.empty() || (c.goal >= 0 && c.floor.empty())) return false;
  for (auto* command : {&c.base, &c.candidate, &c.floor}) command->push_back(nullptr);
  return true;
}

// The k-th of the six orders of three runs.
std::array<int, 3> order_of_round(int k) {
  static constexpr std::array<std::array<int, 3>, 6> kOrders = {
      {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}}};
  return kOrders[static_cast<std::size_t>(k % 6)];
}

}  // namespace

int main(int argc, char** argv) {
  Commands c;
  if (argc < 5 || !parse_commands(argc, argv, c)) {
    std::fprintf(stderr,
                 "usage: bench-pairs N [--goal G] BASE... -- CANDIDATE... [--floor FLOOR...]\n");
    return 2;
  }
  const int n = std::atoi(argv[1]);
  if (n < 1) {
    std::fprintf(stderr, "bench-pairs: N must be at least 1\n");
    return 2;
  }
  const bool with_floor = c.floor.size() > 1;
  std::vector<double> tb, tc, tf, ratio, floor_ratio, gap, extra;
  for (int k = 0; k < n; ++k) {
    std::array<double, 3> t{};
    if (with_floor) {
      for (int which : order_of_round(k)) {
        t[static_cast<std::size_t>(which)] = run_once(which == 0   ? c.base
                                                      : which == 1 ? c.candidate
                                                                   : c.floor);
      }
    } else if (k % 2 == 0) {
      t[0] = run_once(c.base);
      t[1] = run_once(c.candidate);
    } else {
      t[1] = run_once(c.candidate);
      t[0] = run_once(c.base);
    }
    tb.push_back(t[0]);
    tc.push_back(t[1]);
    ratio.push_back(t[1] / t[0]);
    extra.push_back(t[1] - t[0]);
    if (with_floor) {
      tf.push_back(t[2]);
      floor_ratio.push_back(t[2] / t[0]);
      gap.push_back(t[1] / t[0] - t[2] / t[0]);
    }
  }
  const auto [low, high] = median_interval(ratio);
  std::printf(
      "base %.3f ms  candidate %.3f ms  ratio %.3f [95%% CI %.3f-%.3f]  (pairs p10 %.3f, p90 %.3f, "
      "n=%d)  adds %+.3f ms\n",
      percentile(tb, 0.5), percentile(tc, 0.5), percentile(ratio, 0.5), low, high,
      percentile(ratio, 0.1), percentile(ratio, 0.9), n, percentile(extra, 0.5));
  if (!with_floor) return 0;
  const auto [floor_low, floor_high] = median_interval(floor_ratio);
  const auto [gap_low, gap_high] = median_interval(gap);
  const double median_gap = percentile(gap, 0.5);
  std::printf("floor %.3f ms  ratio %.3f [95%% CI %.3f-%.3f]  gap %+.3f [95%% CI %+.3f-%+.3f]",
              percentile(tf, 0.5), percentile(floor_ratio, 0.5), floor_low, floor_high, median_gap,
              gap_low, gap_high);
  if (c.goal >= 0) {
    std::printf("  goal %.2f: %s", c.goal, median_gap <= c.goal ? "met" : "NOT MET");
  }
  std::printf("\n");
  return 0;
}
