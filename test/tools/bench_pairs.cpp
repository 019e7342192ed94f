// bench-pairs N BASE... -- CANDIDATE...
// Runs the two commands N times each, in pairs whose order alternates (base first, then
// candidate first: whatever one run leaves behind for the next, such as a deleted container's
// teardown finishing in the background, falls on both sides alike), stdout/stderr to
// /dev/null. Prints the median wall time of each, the median of the per-pair ratios with its
// 95% confidence interval (distribution-free, from the order statistics) and the spread of single
// pairs (p10..p90), and the median of the per-pair differences (what the candidate adds, in ms).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: bench-pairs N BASE... -- CANDIDATE...\n");
    return 2;
  }
  const int n = std::atoi(argv[1]);
  std::vector<char*> base;
  std::vector<char*> candidate;
  int i = 2;
  for (; i < argc && std::string(argv[i]) != "--"; ++i) base.push_back(argv[i]);
  for (++i; i < argc; ++i) candidate.push_back(argv[i]);
  base.push_back(nullptr);
  candidate.push_back(nullptr);
  std::vector<double> tb, tc, ratio, extra;
  for (int k = 0; k < n; ++k) {
    const bool base_first = k % 2 == 0;
    const double first = run_once(base_first ? base : candidate);
    const double second = run_once(base_first ? candidate : base);
    const double b = base_first ? first : second;
    const double c = base_first ? second : first;
    tb.push_back(b);
    tc.push_back(c);
    ratio.push_back(c / b);
    extra.push_back(c - b);
  }
  const auto [low, high] = median_interval(ratio);
  std::printf(
      "base %.3f ms  candidate %.3f ms  ratio %.3f [95%% CI %.3f-%.3f]  (pairs p10 %.3f, p90 %.3f, "
      "n=%d)  adds %+.3f ms\n",
      percentile(tb, 0.5), percentile(tc, 0.5), percentile(ratio, 0.5), low, high,
      percentile(ratio, 0.1), percentile(ratio, 0.9), n, percentile(extra, 0.5));
  return 0;
}
