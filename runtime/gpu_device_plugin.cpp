// gpu-device-plugin: the Kubernetes device plugin that advertises the node's GPUs.
#include <string>
#include <vector>

#include "deviceplugin/daemon.h"

int main(int argc, char** argv) {
  return gcr::run_device_plugin(std::vector<std::string>(argv + 1, argv + argc));
}
