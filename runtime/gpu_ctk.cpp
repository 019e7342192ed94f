// gpu-ctk: configuration, hooks, CDI and engine set-up for gpu-container-runtime.
#include <string>
#include <vector>

#include "ctk/ctk.h"

int main(int argc, char** argv) {
  return gcr::run_ctk(argc > 0 ? argv[0] : "gpu-ctk",
                      std::vector<std::string>(argv + 1, argv + argc));
}
