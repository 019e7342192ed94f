// NVIDIA's management spec from an in-memory host: which device nodes the device `all` holds,
// and a host without any.
#include <doctest/doctest.h>

#include "cdi/generate.h"
#include "driver/host.h"
#include "test_support.h"
#include "virtual_host.h"

namespace {

using gcr::test::VirtualHost;

const gcr::Config::Driver kRoots{"/driver", "/devroot"};

void add_driver(VirtualHost& fs) {
  fs.add_file("/devroot/proc/driver/nvidia/version",
              "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Thu Feb 22 01:44:30 UTC "
              "2024\n");
  fs.add_file("/devroot/proc/devices",
              "Character devices:\n195 nvidia\n510 nvidia-uvm\n511 nvidia-caps\n");
  fs.add_file("/driver/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15", gcr::test::elf64_header(),
              0755);
  fs.add_file("/usr/bin/gpu-ctk", gcr::test::elf64_header(), 0755);
}

gcr::Result<gcr::CdiSpec> management_spec(VirtualHost& fs) {
  gcr::DriverHost host(kRoots, fs.node_stat(), fs, fs);
  return gcr::generate_management_spec(host, gcr::Config{}, "management.nvidia.com/gpu");
}

}  // namespace

TEST_CASE("the management spec: every NVIDIA node but GPUDirect Storage, NVSwitch and NVLink") {
  VirtualHost fs;
  add_driver(fs);
  fs.add_char_device("/devroot/dev/nvidia0", 195, 0);
  fs.add_char_device("/devroot/dev/nvidiactl", 195, 255);
  fs.add_char_device("/devroot/dev/nvidia-uvm", 510, 0);
  fs.add_char_device("/devroot/dev/nvidia-fs0", 240, 0);
  fs.add_char_device("/devroot/dev/nvidia-nvlink", 243, 0);
  fs.add_char_device("/devroot/dev/nvidia-nvswitch0", 242, 0);
  fs.add_char_device("/devroot/dev/nvidia-caps/nvidia-cap1", 511, 1);
  fs.add_char_device("/devroot/dev/nvidia-caps/nvidia-cap2", 511, 2);
  fs.add_file("/devroot/dev/nvidia-not-a-node", "");
  const auto spec = management_spec(fs);
  REQUIRE_MESSAGE(spec.ok(), spec.error().message);
  CHECK(spec->kind == "management.nvidia.com/gpu");
  REQUIRE(spec->devices.size() == 1);
  CHECK(spec->devices[0].name == "all");
  std::vector<std::string> nodes;
  for (const auto& node : spec->devices[0].edits.device_nodes)
    nodes.push_back(node.path + " <- " + node.host_path);
  CHECK(nodes == std::vector<std::string>{
                     "/dev/nvidia-uvm <- /devroot/dev/nvidia-uvm",
                     "/dev/nvidia0 <- /devroot/dev/nvidia0",
                     "/dev/nvidiactl <- /devroot/dev/nvidiactl",
                     "/dev/nvidia-caps/nvidia-cap1 <- /devroot/dev/nvidia-caps/nvidia-cap1",
                     "/dev/nvidia-caps/nvidia-cap2 <- /devroot/dev/nvidia-caps/nvidia-cap2"});
  CHECK(spec->edits.device_nodes.empty());
}

TEST_CASE("the management spec of a host without NVIDIA device nodes is an error naming /dev") {
  VirtualHost fs;
  add_driver(fs);
  fs.add_char_device("/devroot/dev/null", 1, 3);
  const auto spec = management_spec(fs);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.error().message == "no NVIDIA device nodes in /devroot/dev");
}
