// bench-pairs N BASE... -- CANDIDATE...
// Runs the two commands alternately N times (stdout/stderr to /dev/null) and prints the
// median wall time of each, the median of the per-pair ratios and its spread (p10..p90), and
// the median of the per-pair differences (what the candidate adds, in ms).
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
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
    const double b = run_once(base);
    const double c = run_once(candidate);
    tb.push_back(b);
    tc.push_back(c);
    ratio.push_back(c / b);
    extra.push_back(c - b);
  }
  std::printf(
      "base %.3f ms  candidate %.3f ms  ratio %.3f  (p10 %.3f, p90 %.3f, n=%d)  adds %+.3f ms\n",
      percentile(tb, 0.5), percentile(tc, 0.5), percentile(ratio, 0.5), percentile(ratio, 0.1),
      percentile(ratio, 0.9), n, percentile(extra, 0.5));
  return 0;
}
