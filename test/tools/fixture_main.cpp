// gcr-fixture: builds test fixtures from the command line, for the demo and the benchmarks.
//   gcr-fixture busybox BUNDLE [NAME=VALUE...] -- CMD...   a bundle with a busybox rootfs
//   gcr-fixture glibc BUNDLE [NAME=VALUE...] -- CMD...     the same plus glibc and /probe
//   gcr-fixture gpu-host DIR [GPUS] [lib64] [version=V]    a simulated GPU host (needs root);
//                                                          prints the [driver] keys for it;
//                                                          V: the driver version /proc reports
//   gcr-fixture hostile cache|includes|needed BUNDLE        a glibc bundle asking for GPU 0
//                                                          whose image is one of issue 25's
//                                                          hostile ones; prints its budget
//   gcr-fixture measure [NAME=VALUE...] -- CMD...          runs CMD; prints its exit status,
//                                                          peak RSS (KB), CPU seconds and
//                                                          minor page faults
//   gcr-fixture kubelet DIR SECONDS                        a kubelet's device manager on
//                                                          DIR/kubelet.sock for a real plugin:
//                                                          waits until a plugin's devices are
//                                                          all Healthy, prints them and one
//                                                          device's Allocate answer; exit 1
//                                                          when any stays otherwise
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "fake_kubelet.h"
#include "hostile_image.h"
#include "shim_fixture.h"
#include "sim_host.h"
#include "test_support.h"

namespace {

int bundle(const std::vector<std::string>& args) {
  const auto dash = std::find(args.begin(), args.end(), "--");
  if (args.size() < 4 || dash == args.end() || dash + 1 == args.end()) return 2;
  if (args[0] == "glibc") {
    gcr::test::make_glibc_rootfs(args[1]);
  } else {
    gcr::test::make_busybox_rootfs(args[1]);
  }
  gcr::Json spec = gcr::test::busybox_spec(std::vector<std::string>(dash + 1, args.end()));
  for (auto it = args.begin() + 2; it != dash; ++it) spec["process"]["env"].push_back(*it);
  gcr::test::write_file(args[1] + "/config.json", spec.dump(2));
  return 0;
}

int gpu_host(const std::vector<std::string>& args) {
  gcr::test::SimHostOptions options;
  if (args.size() >= 3) options.gpus = static_cast<unsigned>(std::stoul(args[2]));
  for (std::size_t i = 3; i < args.size(); ++i) {
    if (args[i] == "lib64") options.layout = gcr::test::LibLayout::kLib64Cache;
    if (args[i].rfind("version=", 0) == 0) options.driver_version = args[i].substr(8);
  }
  const gcr::test::SimHost host(args[1], options);
  std::printf("[driver]\nroot = \"%s\"\ndev-root = \"%s\"\n", host.driver_root().c_str(),
              host.dev_root().c_str());
  return 0;
}

int hostile(const std::vector<std::string>& args) {
  gcr::test::make_glibc_rootfs(args[2]);
  gcr::Json spec = gcr::test::busybox_spec({"/bin/sh", "-c", "true"});
  spec["process"]["env"].push_back("NVIDIA_VISIBLE_DEVICES=0");
  gcr::test::write_file(args[2] + "/config.json", spec.dump(2));
  std::printf("%s\n", gcr::test::plant_hostile_image(args[1], args[2] + "/rootfs").c_str());
  return 0;
}

int measure(const std::vector<std::string>& args) {
  const auto dash = std::find(args.begin(), args.end(), "--");
  if (dash == args.end() || dash + 1 == args.end()) return 2;
  std::map<std::string, std::string> env;
  for (auto it = args.begin() + 1; it != dash; ++it)
    env[it->substr(0, it->find('='))] = it->substr(it->find('=') + 1);
  const auto m = gcr::test::run_measured(std::vector<std::string>(dash + 1, args.end()), env);
  std::printf("%d %ld %.3f %ld\n", m.exit_code, m.max_rss_kb, m.cpu_seconds, m.minor_faults);
  return 0;
}

bool all_healthy(const gcr::test::Devices& devices) {
  return !devices.empty() && std::all_of(devices.begin(), devices.end(),
                                         [](const auto& d) { return d.health() == "Healthy"; });
}

// Serves DIR/kubelet.sock until the first plugin registers and its devices are all Healthy (or
// SECONDS pass), then prints its resource, its devices and what Allocate hands one of them.
int kubelet(const std::vector<std::string>& args) {
  const std::chrono::seconds timeout(std::stoul(args[2]));
  gcr::test::FakeKubelet kubelet(args[1]);
  if (!kubelet.wait_for_registrations(1, timeout)) {
    std::printf("no plugin registered in %s s\n", args[2].c_str());
    return 1;
  }
  const std::string resource = kubelet.registrations().front().resource_name();
  const bool healthy = kubelet.wait_for_devices(all_healthy, timeout, resource);
  const auto devices = kubelet.devices(resource);
  std::printf("%s: %zu devices\n", resource.c_str(), devices.size());
  for (const auto& d : devices) std::printf("  %s %s\n", d.id().c_str(), d.health().c_str());
  if (devices.empty()) return 1;
  v1beta1::AllocateResponse answer;
  const auto status = kubelet.allocate({devices.front().id()}, answer, resource);
  if (!status.ok()) {
    std::printf("Allocate %s: %s\n", devices.front().id().c_str(), status.error_message().c_str());
    return 1;
  }
  std::printf("Allocate %s:", devices.front().id().c_str());
  for (const auto& arg : gcr::test::ctr_arguments(answer.container_responses(0)))
    std::printf(" %s", arg.c_str());
  std::printf("\n");
  return healthy ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  int status = 2;
  if (!args.empty() && (args[0] == "busybox" || args[0] == "glibc")) status = bundle(args);
  if (args.size() >= 2 && args[0] == "gpu-host") status = gpu_host(args);
  if (args.size() == 3 && args[0] == "hostile") status = hostile(args);
  if (!args.empty() && args[0] == "measure") status = measure(args);
  if (args.size() == 3 && args[0] == "kubelet") status = kubelet(args);
  if (status == 2) {
    std::fprintf(stderr,
                 "usage: gcr-fixture busybox|glibc BUNDLE [NAME=VALUE...] -- CMD...\n"
                 "       gcr-fixture gpu-host DIR [GPUS] [lib64] [version=V]\n"
                 "       gcr-fixture hostile cache|includes|needed BUNDLE\n"
                 "       gcr-fixture measure [NAME=VALUE...] -- CMD...\n"
                 "       gcr-fixture kubelet DIR SECONDS\n");
  }
  return status;
}
