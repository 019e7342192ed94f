// plugin-bench: gpu-device-plugin's admission latency and idle memory, as scripts/bench.sh
// prints them. A simulated host with GPUS GPUs (default 8), the plugin registered with the
// fake kubelet, then N (default 1000) Allocate and GetPreferredAllocation calls each, timed
// from the kubelet's side (p50, p99), and the plugin's resident memory after it idled.
//   plugin-bench PLUGIN [GPUS] [N]
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_kubelet.h"
#include "sim_host.h"
#include "test_support.h"

namespace {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

void report(const char* what, const std::vector<double>& micros) {
  std::printf("%-32s p50 %7.1f us  p99 %7.1f us  (n=%zu)\n", what, percentile(micros, 0.5),
              percentile(micros, 0.99), micros.size());
}

std::string vm_rss(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return line.substr(6);
  }
  return "unknown";
}

template <class Call>
std::vector<double> timed(int n, Call call) {
  std::vector<double> micros;
  for (int i = 0; i < n; ++i) {
    const auto start = Clock::now();
    if (!call(i).ok()) {
      std::fprintf(stderr, "plugin-bench: a call failed\n");
      std::exit(1);
    }
    micros.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return micros;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: plugin-bench PLUGIN [GPUS] [N]\n");
    return 2;
  }
  const std::string plugin = argv[1];
  const unsigned gpus = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 8;
  const int n = argc > 3 ? std::stoi(argv[3]) : 1000;
  gcr::test::TempDir dir;
  gcr::test::SimHostOptions options;
  options.gpus = gpus;
  const gcr::test::SimHost host(dir / "host", options);
  gcr::test::make_dirs(dir / "kubelet");
  gcr::Json config = host.driver_config();
  config["device-plugin"] = {{"kubelet-dir", dir / "kubelet"}};
  gcr::test::write_file(dir / "config.json", config.dump());
  gcr::test::FakeKubelet kubelet(dir / "kubelet");
  gcr::test::Daemon daemon({plugin, "--config", dir / "config.json"}, {}, dir / "plugin.log");
  if (!kubelet.wait_for_registrations(1, std::chrono::seconds(10))) {
    std::fprintf(stderr, "plugin-bench: no registration\n%s",
                 gcr::test::read_file(dir / "plugin.log").c_str());
    return 1;
  }
  std::vector<std::string> ids;
  for (const auto& d : kubelet.devices()) ids.push_back(d.id());
  std::printf("gpu-device-plugin, %u GPUs\n", gpus);
  report("Allocate (1 GPU)", timed(n, [&](int i) {
           v1beta1::AllocateResponse r;
           return kubelet.allocate({ids[static_cast<std::size_t>(i) % ids.size()]}, r);
         }));
  report("GetPreferredAllocation (half)", timed(n, [&](int) {
           v1beta1::PreferredAllocationResponse r;
           return kubelet.preferred(ids, {}, static_cast<int>(ids.size() / 2), r);
         }));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  std::printf("%-32s %s\n", "idle RSS", vm_rss(daemon.pid()).c_str());
  return 0;
}
