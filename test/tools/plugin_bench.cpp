// plugin-bench: gpu-device-plugin's admission latency and idle memory, as scripts/bench.sh
// prints them. A simulated host shaped like a topology fixture (dgx1, nvswitch8, pcie4,
// sixteen; NVML describes it), the plugin registered with the fake kubelet, then N (default
// 1000) Allocate and GetPreferredAllocation calls each, timed from the kubelet's side (p50,
// p99), and the plugin's resident memory after it idled.
//   plugin-bench PLUGIN [FIXTURE] [N]
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "plugin_fixture.h"
#include "topology_fixtures.h"

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
    std::fprintf(stderr, "usage: plugin-bench PLUGIN [FIXTURE] [N]\n");
    return 2;
  }
  const std::string plugin = argv[1];
  const std::string fixture_name = argc > 2 ? argv[2] : "dgx1";
  const int n = argc > 3 ? std::stoi(argv[3]) : 1000;
  const auto& fixture = gcr::test::topology_fixture(fixture_name);
  gcr::test::PluginFixture f(gcr::Json::object(), gcr::test::host_options(fixture));
  f.describe_nvml(gcr::test::stub_description(fixture, f.host));
  f.start_kubelet();
  f.start_plugin();
  if (!f.kubelet->wait_for_registrations(1, std::chrono::seconds(10))) {
    std::fprintf(stderr, "plugin-bench: no registration\n%s", f.log().c_str());
    return 1;
  }
  for (int i = 0; i < 50 && f.log().find("read from NVML") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<std::string> ids;
  for (const auto& d : f.kubelet->devices()) ids.push_back(d.id());
  std::printf("gpu-device-plugin, %s (%zu GPUs, topology from NVML)\n", fixture.name.c_str(),
              ids.size());
  report("Allocate (1 GPU)", timed(n, [&](int i) {
           v1beta1::AllocateResponse r;
           return f.kubelet->allocate({ids[static_cast<std::size_t>(i) % ids.size()]}, r);
         }));
  report("GetPreferredAllocation (half)", timed(n, [&](int) {
           v1beta1::PreferredAllocationResponse r;
           return f.kubelet->preferred(ids, {}, static_cast<int>(ids.size() / 2), r);
         }));
  std::this_thread::sleep_for(std::chrono::seconds(2));
  std::printf("%-32s %s\n", "idle RSS", vm_rss(f.plugin->pid()).c_str());
  return 0;
}
