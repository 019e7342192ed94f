// gcr-fixture: builds test fixtures from the command line, for the demo and the benchmarks.
//   gcr-fixture busybox BUNDLE CMD...          a bundle with a busybox rootfs running CMD
//   gcr-fixture gpu-host DIR [GPUS] [lib64]    a simulated GPU host (needs root); prints
//                                              the [driver] keys that point at it
#include <cstdio>
#include <string>
#include <vector>

#include "shim_fixture.h"
#include "sim_host.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 3 && args[0] == "busybox") {
    gcr::test::make_busybox_rootfs(args[1]);
    const std::vector<std::string> cmd(args.begin() + 2, args.end());
    gcr::test::write_file(args[1] + "/config.json", gcr::test::busybox_spec(cmd).dump(2));
    return 0;
  }
  if (args.size() >= 2 && args[0] == "gpu-host") {
    gcr::test::SimHostOptions options;
    if (args.size() >= 3) options.gpus = static_cast<unsigned>(std::stoul(args[2]));
    if (args.size() >= 4 && args[3] == "lib64") options.layout = gcr::test::LibLayout::kLib64Cache;
    const gcr::test::SimHost host(args[1], options);
    std::printf("[driver]\nroot = \"%s\"\ndev-root = \"%s\"\n", host.driver_root().c_str(),
                host.dev_root().c_str());
    return 0;
  }
  std::fprintf(stderr, "usage: gcr-fixture busybox BUNDLE CMD... | gpu-host DIR [GPUS] [lib64]\n");
  return 2;
}
