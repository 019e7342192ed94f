#include <doctest/doctest.h>

#include "driver/proc.h"

TEST_CASE("driver version from proprietary and open kernel modules") {
  CHECK(*gcr::parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Thu "
                                   "Feb 22 01:44:30 UTC 2024\nGCC version: x\n") == "550.54.15");
  CHECK(*gcr::parse_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                   "535.104.05  Release Build  (dvs-builder@U16)\n") ==
        "535.104.05");
  CHECK_FALSE(gcr::parse_driver_version("garbage\n").ok());
  CHECK_FALSE(
      gcr::parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  abc\n").ok());
}

TEST_CASE("GPU information file") {
  const auto gpu = gcr::parse_gpu_information(
      "Model: \t\t Tesla V100-SXM2-16GB\nIRQ:   \t\t 408\nGPU UUID: \t "
      "GPU-edfee158-11c1-52b8-0517-92f30e7fac88\n"
      "Video BIOS: \t 88.00.41.00.01\nBus Type: \t PCIe\nBus Location: \t 0000:06:00.0\nDevice "
      "Minor: \t 3\n");
  REQUIRE(gpu.ok());
  CHECK(gpu->model == "Tesla V100-SXM2-16GB");
  CHECK(gpu->uuid == "GPU-edfee158-11c1-52b8-0517-92f30e7fac88");
  CHECK(gpu->bus.to_string() == "0000:06:00.0");
  CHECK(gpu->minor == 3);
  CHECK_FALSE(
      gcr::parse_gpu_information("Model: x\nGPU UUID: GPU-1\nBus Location: 0000:06:00.0\n").ok());
  CHECK_FALSE(
      gcr::parse_gpu_information("GPU UUID: GPU-1\nBus Location: zz\nDevice Minor: 1\n").ok());
  CHECK_FALSE(
      gcr::parse_gpu_information("GPU UUID: GPU-1\nBus Location: 0000:06:00.0\nDevice Minor: -1\n")
          .ok());
}

TEST_CASE("PCI addresses: 4 or 8 digit domains, no domain, ordering") {
  CHECK(gcr::parse_pci_address("00000000:3B:00.0")->to_string() == "0000:3b:00.0");
  CHECK(gcr::parse_pci_address("3b:00.0")->to_string() == "0000:3b:00.0");
  CHECK(*gcr::parse_pci_address("0000:06:00.0") < *gcr::parse_pci_address("0000:3b:00.0"));
  CHECK(*gcr::parse_pci_address("0000:ff:00.0") < *gcr::parse_pci_address("0001:00:00.0"));
  CHECK_FALSE(gcr::parse_pci_address("0"));
  CHECK_FALSE(gcr::parse_pci_address("GPU-1"));
  CHECK_FALSE(gcr::parse_pci_address("0000:3b:00.8"));
  CHECK_FALSE(gcr::parse_pci_address("0000:3g:00.0"));
}

TEST_CASE("proc/devices: character majors only") {
  const auto majors = gcr::parse_char_majors(
      "Character devices:\n  1 mem\n195 nvidia-frontend\n508 nvidia-uvm\n509 nvidia-caps\n\nBlock "
      "devices:\n259 blkext\n");
  CHECK(majors.at("nvidia-frontend") == 195);
  CHECK(majors.at("nvidia-uvm") == 508);
  CHECK(majors.at("nvidia-caps") == 509);
  CHECK(majors.count("blkext") == 0);
}

TEST_CASE("mig-minors: strict lines") {
  const auto m =
      gcr::parse_mig_minors("config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\n");
  REQUIRE(m.ok());
  CHECK(m->config == 1u);
  CHECK(m->monitor == 2u);
  CHECK(m->by_path.at("gpu0/gi1/ci0/access") == 13);
  CHECK_FALSE(gcr::parse_mig_minors("config one\n").ok());
  CHECK_FALSE(gcr::parse_mig_minors("surprise 3\n").ok());
  CHECK(*gcr::parse_cap_file_minor("DeviceFileMinor: 7\nDeviceFileMode: 256\n") == 7);
  CHECK_FALSE(gcr::parse_cap_file_minor("DeviceFileMode: 256\n").ok());
}
