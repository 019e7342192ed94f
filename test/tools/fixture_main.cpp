// gcr-fixture: builds test fixtures from the command line, for the demo and the benchmarks.
//   gcr-fixture busybox BUNDLE CMD...   a bundle with a busybox rootfs running CMD
#include <cstdio>
#include <string>
#include <vector>

#include "shim_fixture.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() >= 3 && args[0] == "busybox") {
    gcr::test::make_busybox_rootfs(args[1]);
    const std::vector<std::string> cmd(args.begin() + 2, args.end());
    gcr::test::write_file(args[1] + "/config.json", gcr::test::busybox_spec(cmd).dump(2));
    return 0;
  }
  std::fprintf(stderr, "usage: gcr-fixture busybox BUNDLE CMD...\n");
  return 2;
}
