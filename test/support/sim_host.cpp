#include "sim_host.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "test_support.h"

namespace gcr::test {
namespace {

// Each stub library: file name prefix and SONAME version, as the driver ships them.
struct StubLib {
  const char* name;
  const char* soversion;  // "" means the full driver version
};
const StubLib kStubLibs[] = {
    {"libcuda.so", "1"},
    {"libnvidia-ml.so", "1"},
    {"libnvidia-cfg.so", "1"},
    {"libnvidia-ptxjitcompiler.so", "1"},
    {"libnvidia-opencl.so", "1"},
    {"libnvidia-nvvm.so", "4"},
    {"libnvidia-allocator.so", "1"},
    {"libnvidia-encode.so", "1"},
    {"libnvcuvid.so", "1"},
    {"libnvidia-opticalflow.so", "1"},
    {"libvdpau_nvidia.so", "1"},
    {"libGLX_nvidia.so", "0"},
    {"libEGL_nvidia.so", "0"},
    {"libGLESv2_nvidia.so", "2"},
    {"libnvidia-glcore.so", ""},
    {"libnvidia-eglcore.so", ""},
    {"libnvidia-tls.so", ""},
    {"libnvidia-ngx.so", "1"},
    {"libnvidia-gtk3.so", ""},
};

// MIG access capabilities of GPU minor 0: instance files and their minors.
const std::pair<const char*, unsigned> kMigCaps[] = {
    {"gi1/access", 12}, {"gi1/ci0/access", 13}, {"gi2/access", 21}, {"gi2/ci0/access", 22}};

const unsigned kBuses[] = {0x06, 0x3b, 0x86, 0xaf, 0x07, 0x3c, 0x87, 0xb0,
                           0x08, 0x3d, 0x88, 0xb1, 0x09, 0x3e, 0x89, 0xb2};
const unsigned kMinors[] = {3, 0, 4, 1, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};  // no minor 2

void copy(const std::string& from, const std::string& to) {
  make_dirs(to.substr(0, to.rfind('/')));
  // std's copy, not Boost 1.74's: on Linux 5.19 and later Boost's fails with EXDEV between two
  // filesystems of one type (copy_file_range), as from the build tree to bench.sh's own disk.
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

constexpr gid_t kVideoGid = 44;  // DRM card nodes are root:video 0660, as on Debian

void mknod_char(const std::string& path, unsigned major_number, unsigned minor_number,
                mode_t mode = 0666, gid_t gid = 0) {
  make_dirs(path.substr(0, path.rfind('/')));
  if (::mknod(path.c_str(), S_IFCHR | mode, makedev(major_number, minor_number)) != 0 ||
      ::chown(path.c_str(), 0, gid) != 0) {
    throw std::runtime_error("mknod " + path + " (needs root)");
  }
  ::chmod(path.c_str(), mode);
}

void make_socket(const std::string& path) {
  make_dirs(path.substr(0, path.rfind('/')));
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("socket path too long: " + path);
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  const int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::close(fd);
  if (rc != 0) throw std::runtime_error("bind " + path);
}

std::string gpu_information(const SimGpu& gpu) {
  return "Model: \t\t " + gpu.model + "\nIRQ:   \t\t 408\nGPU UUID: \t " + gpu.uuid +
         "\nVideo BIOS: \t 88.00.41.00.01\nBus Type: \t PCIe\nDMA Size: \t 47 bits\nDMA Mask: \t "
         "0x7fffffffffff\n"
         "Bus Location: \t " +
         gpu.bus + "\nDevice Minor: \t " + std::to_string(gpu.minor) + "\nGPU Excluded:\t No\n";
}

// Installs one library like the driver installer: the versioned file plus SONAME and .so links.
void install_lib(const std::string& stub_dir, const std::string& root_dir, const StubLib& lib,
                 const std::string& version) {
  const std::string file = std::string(lib.name) + "." + version;
  copy(stub_dir + "/" + file, root_dir + "/" + file);
  const std::string soname =
      std::string(lib.name) + "." + (*lib.soversion ? lib.soversion : version);
  if (soname != file) make_symlink(file, root_dir + "/" + soname);
}

}  // namespace

SimHost::SimHost(const std::string& dir, const SimHostOptions& options)
    : options_(options), driver_root_(dir + "/driver"), dev_root_(dir + "/dev-root") {
  if (options.gpus > sizeof kBuses / sizeof kBuses[0])
    throw std::runtime_error("too many simulated GPUs");
  std::vector<std::pair<unsigned, unsigned>> by_bus;
  for (unsigned i = 0; i < options.gpus; ++i) by_bus.emplace_back(kBuses[i], kMinors[i]);
  std::sort(by_bus.begin(), by_bus.end());
  for (unsigned i = 0; i < by_bus.size(); ++i) {
    char bus[16];
    char uuid[64];
    std::snprintf(bus, sizeof bus, "0000:%02x:00.0", by_bus[i].first);
    std::snprintf(uuid, sizeof uuid, "GPU-%08x-1111-2222-3333-4444%08x",
                  0x5eed0000u + by_bus[i].first, by_bus[i].second);
    const int numa = i < options.numa.size() ? options.numa[i] : i < (options.gpus + 1) / 2 ? 0 : 1;
    gpus_.push_back(SimGpu{i, bus, by_bus[i].second, uuid, "NVIDIA A100-SXM4-40GB", numa});
  }
  write_proc_files();
  if (options.device_nodes) make_device_nodes();
  install_libraries();
  install_binaries_ipc_firmware();
}

std::string SimHost::lib_dir() const {
  switch (options_.layout) {
    case LibLayout::kMultiarch:
      return "/usr/lib/x86_64-linux-gnu";
    case LibLayout::kLib64Cache:
      return "/usr/lib64";
    case LibLayout::kUsrLocalNvidia:
      return "/usr/local/nvidia/lib64";
  }
  return "";
}

std::string SimHost::lib32_dir() const {
  switch (options_.layout) {
    case LibLayout::kMultiarch:
      return "/usr/lib/i386-linux-gnu";
    case LibLayout::kLib64Cache:
      return "/usr/lib";
    case LibLayout::kUsrLocalNvidia:
      return "/usr/local/nvidia/lib";
  }
  return "";
}

Json SimHost::driver_config() const {
  return Json{{"driver", {{"root", driver_root_}, {"dev-root", dev_root_}}}};
}

void SimHost::remove_mig_instances() const {
  boost::filesystem::remove_all(dev_root_ + "/proc/driver/nvidia/capabilities/gpu0/mig");
}

void SimHost::set_initialised(std::size_t index, bool initialised) const {
  const SimGpu& gpu = gpus_.at(index);
  std::string text = gpu_information(gpu);
  if (!initialised) {
    const auto replace = [&](const std::string& from, const std::string& to) {
      text.replace(text.find(from), from.size(), to);
    };
    replace(gpu.uuid, kUninitialisedUuid);
    replace("88.00.41.00.01", "??.??.??.??.??");
  }
  // Replaced whole, as the driver's file reads: a daemon reading it meanwhile sees one or the
  // other.
  const std::string path = dev_root_ + "/proc/driver/nvidia/gpus/" + gpu.bus + "/information";
  write_file(path + ".new", text);
  boost::filesystem::rename(path + ".new", path);
}

void SimHost::write_proc_files() const {
  const std::string proc = dev_root_ + "/proc";
  write_file(
      proc + "/driver/nvidia/version",
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " +
          (options_.driver_version.empty() ? version() : options_.driver_version) +
          "  Thu Feb 22 01:44:30 UTC 2024\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  for (const auto& gpu : gpus_)
    write_file(proc + "/driver/nvidia/gpus/" + gpu.bus + "/information", gpu_information(gpu));
  write_file(proc + "/driver/nvidia/params",
             "ModifyDeviceFiles: 1\nDeviceFileUID: 0\nDeviceFileGID: 0\nDeviceFileMode: 438\n");
  write_file(proc + "/devices", "Character devices:\n  1 mem\n  5 /dev/tty\n195 nvidia\n" +
                                    std::to_string(uvm_major()) + " nvidia-uvm\n" +
                                    std::to_string(caps_major()) + " nvidia-caps\n" +
                                    std::to_string(imex_major()) +
                                    " nvidia-caps-imex-channels\n\nBlock devices:\n  8 sd\n");
  write_file(proc + "/driver/nvidia-caps/mig-minors",
             "config 1\nmonitor 2\ngpu0/gi1/access 12\ngpu0/gi1/ci0/access 13\ngpu0/gi2/access "
             "21\ngpu0/gi2/ci0/access 22\n");
  // The GPU with minor 0 (bus 3b, index 1) is in MIG mode with two instances (see the NVML stub).
  for (const auto& [file, minor] : kMigCaps) {
    write_file(proc + "/driver/nvidia/capabilities/gpu0/mig/" + file,
               "DeviceFileMinor: " + std::to_string(minor) +
                   "\nDeviceFileMode: 292\nDeviceFileModify: 1\n");
  }
  write_sysfs();
  // sysfs: every GPU but the last in bus order has a DRM card and render node.
  for (const auto& gpu : gpus_) {
    if (gpu.index + 1 == gpus_.size()) break;
    const std::string drm = dev_root_ + "/sys/bus/pci/devices/" + gpu.bus + "/drm/";
    make_dirs(drm + "card" + std::to_string(gpu.minor + 1));
    make_dirs(drm + "renderD" + std::to_string(128 + gpu.minor));
  }
  write_file(proc + "/driver/nvidia/capabilities/mig/config",
             "DeviceFileMinor: 1\nDeviceFileMode: 256\nDeviceFileModify: 1\n");
  write_file(proc + "/driver/nvidia/capabilities/mig/monitor",
             "DeviceFileMinor: 2\nDeviceFileMode: 292\nDeviceFileModify: 1\n");
}

// /sys/bus/pci/devices/<bus> links to the GPU's place in /sys/devices: behind its switch (the
// switch's own root port, its upstream port, one downstream port per GPU) or a root port of
// its own, always under its NUMA node's host bridge.
void SimHost::write_sysfs() const {
  for (const auto& gpu : gpus_) {
    const int sw = gpu.index < options_.pcie_switch.size() ? options_.pcie_switch[gpu.index] : -1;
    const int rc = std::max(gpu.numa, 0) * 0x40;  // the NUMA node's host bridge
    char path[160];
    if (sw >= 0) {
      std::snprintf(path, sizeof path,
                    "pci0000:%02x/0000:%02x:%02x.0/0000:%02x:00.0/0000:%02x:%02x.0/%s", rc, rc,
                    0x01 + sw, 0x10 + sw * 2, 0x11 + sw * 2, gpu.index, gpu.bus.c_str());
    } else {
      std::snprintf(path, sizeof path, "pci0000:%02x/0000:%02x:%02x.0/%s", rc, rc, 0x20 + gpu.index,
                    gpu.bus.c_str());
    }
    const std::string real = dev_root_ + "/sys/devices/" + path;
    make_dirs(real);
    write_file(real + "/numa_node", std::to_string(gpu.numa) + "\n");
    write_file(real + "/class", "0x030200\n");  // a 3D controller, as data-center GPUs are
    make_symlink("../../../devices/" + std::string(path),
                 dev_root_ + "/sys/bus/pci/devices/" + gpu.bus);
  }
}

void SimHost::make_device_nodes() const {
  const std::string dev = dev_root_ + "/dev";
  for (const auto& gpu : gpus_)
    mknod_char(dev + "/nvidia" + std::to_string(gpu.minor), 195, gpu.minor);
  mknod_char(dev + "/nvidiactl", 195, 255);
  mknod_char(dev + "/nvidia-modeset", 195, 254);
  mknod_char(dev + "/nvidia-uvm", uvm_major(), 0);
  mknod_char(dev + "/nvidia-uvm-tools", uvm_major(), 1);
  mknod_char(dev + "/nvidia-caps/nvidia-cap1", caps_major(), 1, 0400);
  mknod_char(dev + "/nvidia-caps/nvidia-cap2", caps_major(), 2, 0444);
  for (const auto& [file, minor] : kMigCaps) {
    mknod_char(dev + "/nvidia-caps/nvidia-cap" + std::to_string(minor), caps_major(), minor, 0444);
  }
  mknod_char(dev + "/nvidia-caps-imex-channels/channel0", imex_major(), 0);
  mknod_char(dev + "/nvidia-caps-imex-channels/channel1", imex_major(), 1);
  mknod_char(dev + "/nvidia-caps-imex-channels/channel3", imex_major(), 4);  // a wrong minor
  for (const auto& gpu : gpus_) {
    mknod_char(dev + "/dri/card" + std::to_string(gpu.minor + 1), 226, gpu.minor + 1, 0660,
               kVideoGid);
    mknod_char(dev + "/dri/renderD" + std::to_string(128 + gpu.minor), 226, 128 + gpu.minor);
  }
  // What NVIDIA_GDS, NVIDIA_MOFED, NVIDIA_GDRCOPY and NVIDIA_NVSWITCH turn on.
  mknod_char(dev + "/nvidia-fs0", 240, 0);
  mknod_char(dev + "/nvidia-fs1", 240, 1);
  mknod_char(dev + "/infiniband/uverbs0", 231, 192);
  mknod_char(dev + "/infiniband/rdma_cm", 10, 58);
  mknod_char(dev + "/infiniband/umad0", 231, 0);
  mknod_char(dev + "/gdrdrv", 241, 0);
  mknod_char(dev + "/nvidia-nvswitchctl", 242, 255);
  mknod_char(dev + "/nvidia-nvswitch0", 242, 0);
  // An NVSwitch host runs NVIDIA's fabric manager (its comm, cut to 15 bytes).
  write_file(dev_root_ + "/proc/" + std::string(kFabricManagerPid) + "/comm", "nv-fabricmanage\n");
}

void SimHost::install_libraries() const {
  const std::string stubs = GCR_STUB_DIR;
  for (const auto& lib : kStubLibs) {
    // libvdpau opens its drivers by path in vdpau/, where the driver installs them.
    const std::string sub = std::string(lib.name) == "libvdpau_nvidia.so" ? "/vdpau" : "";
    install_lib(stubs + "/lib64", driver_root_ + lib_dir() + sub, lib, version());
    install_lib(stubs + "/lib32", driver_root_ + lib32_dir() + sub, lib, version());
  }
  make_symlink("libcuda.so.1", driver_root_ + lib_dir() + "/libcuda.so");
  const StubLib decoy{"libcuda.so", "1"};
  if (options_.layout == LibLayout::kMultiarch) {
    copy(stubs + "/decoy/libcuda.so.470.57.02", driver_root_ + lib_dir() + "/libcuda.so.470.57.02");
    return;
  }
  if (options_.layout == LibLayout::kUsrLocalNvidia) {
    write_file(driver_root_ + "/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n");
    write_file(driver_root_ + "/etc/ld.so.conf.d/nvidia.conf",
               "/usr/local/nvidia/lib64\n/usr/local/nvidia/lib\n");
  } else {
    install_lib(stubs + "/decoy", driver_root_ + "/usr/lib64/legacy", decoy, "470.57.02");
    write_file(driver_root_ + "/etc/ld.so.conf", "/usr/lib64\n/usr/lib64/legacy\n/usr/lib\n");
  }
  make_dirs(driver_root_ + "/var/cache/ldconfig");
  const auto ldconfig = run({"/sbin/ldconfig", "-r", driver_root_});
  if (ldconfig.exit_code != 0)
    throw std::runtime_error("ldconfig -r (needs root): " + ldconfig.err);
}

void SimHost::install_binaries_ipc_firmware() const {
  write_file(
      driver_root_ + "/usr/bin/nvidia-smi",
      "#!/bin/sh\necho \"NVIDIA-SMI (simulated)   Driver Version: " + version() +
          "\"\nfor d in /dev/nvidia[0-9]*; do [ -c \"$d\" ] && echo \"GPU device $d\"; done\n",
      0755);
  for (const char* bin : {"nvidia-debugdump", "nvidia-persistenced", "nvidia-cuda-mps-control",
                          "nvidia-cuda-mps-server"}) {
    write_file(driver_root_ + "/usr/bin/" + bin, "#!/bin/sh\nexit 0\n", 0755);
  }
  write_file(driver_root_ + "/usr/bin/nvidia-settings", "#!/bin/sh\nexit 0\n", 0755);
  if (options_.layout == LibLayout::kUsrLocalNvidia) {
    write_file(driver_root_ + "/usr/bin/nvidia-smi",
               "#!/bin/sh\nexec /usr/local/nvidia/bin/nvidia-smi \"$@\"\n", 0755);
    make_dirs(driver_root_ + "/usr/local/nvidia/bin");
    copy(built("dlopen-probe"), driver_root_ + "/usr/local/nvidia/bin/nvidia-smi");
  }
  make_socket(driver_root_ + "/run/nvidia-persistenced/socket");
  // Graphics configuration: the /etc copy of the Vulkan ICD wins over /usr/share's.
  write_file(driver_root_ + "/usr/share/glvnd/egl_vendor.d/10_nvidia.json", "{\"egl\": 1}\n");
  write_file(driver_root_ + "/etc/vulkan/icd.d/nvidia_icd.json", "{\"icd\": \"etc\"}\n");
  write_file(driver_root_ + "/usr/share/vulkan/icd.d/nvidia_icd.json", "{\"icd\": \"share\"}\n");
  write_file(driver_root_ + "/usr/share/vulkan/implicit_layer.d/nvidia_layers.json", "{}\n");
  make_dirs(driver_root_ + "/run/udev/data");
  write_file(driver_root_ + "/etc/cufile.json", "{}\n");
  make_dirs(driver_root_ + "/tmp/nvidia-mps");
  for (const char* fw : {"gsp_ga10x.bin", "gsp_tu10x.bin"}) {
    write_file(driver_root_ + "/lib/firmware/nvidia/" + version() + "/" + fw, "firmware");
  }
}

}  // namespace gcr::test
