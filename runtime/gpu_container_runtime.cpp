// gpu-container-runtime: a drop-in for runc that gives containers NVIDIA GPUs.
#include <string>
#include <vector>

#include "shim/shim.h"

int main(int argc, char** argv) {
  return gcr::run_shim(argc > 0 ? argv[0] : "", std::vector<std::string>(argv + 1, argv + argc));
}
