#include "driver/files.h"

#include <algorithm>
#include <initializer_list>
#include <span>
#include <string_view>

namespace gcr {
namespace {

constexpr std::string_view kUtilityLibs[] = {"libnvidia-ml.so", "libnvidia-cfg.so",
                                             "libnvidia-nscq.so"};
constexpr std::string_view kComputeLibs[] = {"libcuda.so",
                                             "libcudadebugger.so",
                                             "libnvidia-opencl.so",
                                             "libnvidia-gpucomp.so",
                                             "libnvidia-ptxjitcompiler.so",
                                             "libnvidia-fatbinaryloader.so",
                                             "libnvidia-compiler.so",
                                             "libnvidia-pkcs11.so",
                                             "libnvidia-pkcs11-openssl3.so",
                                             "libnvidia-nvvm.so",
                                             "libnvidia-nvvm70.so",
                                             "libnvidia-tileiras.so"};
// GBM's allocator serves CUDA interop and the GBM backend (gbm/nvidia-drm_gbm.so) alike.
constexpr std::string_view kComputeAndGraphicsLibs[] = {"libnvidia-allocator.so"};
constexpr std::string_view kVideoLibs[] = {"libnvidia-encode.so", "libnvidia-opticalflow.so",
                                           "libnvcuvid.so"};
constexpr std::string_view kGraphicsLibs[] = {
    "libnvidia-eglcore.so",   "libnvidia-glcore.so", "libnvidia-tls.so",
    "libnvidia-glsi.so",      "libnvidia-fbc.so",    "libnvidia-ifr.so",
    "libnvidia-rtcore.so",    "libnvoptix.so",       "libGLX_nvidia.so",
    "libEGL_nvidia.so",       "libGLESv2_nvidia.so", "libGLESv1_CM_nvidia.so",
    "libnvidia-glvkspirv.so", "libnvidia-cbl.so",    "libnvidia-vulkan-producer.so"};
constexpr std::string_view kNgxLibs[] = {"libnvidia-ngx.so"};
// The IMEX daemon and its control program, which multi-node NVLink (GB200) pods run.
constexpr std::string_view kUtilityBinaries[] = {"nvidia-smi",          "nvidia-debugdump",
                                                 "nvidia-persistenced", "nv-fabricmanager",
                                                 "nvidia-imex",         "nvidia-imex-ctl"};
constexpr std::string_view kComputeBinaries[] = {"nvidia-cuda-mps-control",
                                                 "nvidia-cuda-mps-server"};

void add(std::vector<std::string>& to, std::span<const std::string_view> from) {
  to.insert(to.end(), from.begin(), from.end());
}

CapabilitySet set_of(std::initializer_list<Capability> caps) {
  CapabilitySet set;
  for (Capability c : caps) set.add(c);
  return set;
}

bool names_library(std::string_view file, std::span<const std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view prefix) {
    return file.starts_with(prefix) && (file.size() == prefix.size() || file[prefix.size()] == '.');
  });
}

std::optional<CapabilitySet> library_capabilities(const std::string& file) {
  using C = Capability;
  if (names_library(file, kUtilityLibs)) return set_of({C::kUtility});
  if (names_library(file, kComputeLibs)) return set_of({C::kCompute, C::kVideo});
  if (names_library(file, kComputeAndGraphicsLibs))
    return set_of({C::kCompute, C::kVideo, C::kGraphics, C::kDisplay});
  if (names_library(file, kVideoLibs)) return set_of({C::kVideo});
  if (names_library(file, kGraphicsLibs)) return set_of({C::kGraphics, C::kDisplay});
  // The EGL platform libraries the EGL external-platform files name (libnvidia-egl-wayland,
  // -gbm, -xcb, -xlib, and whatever the next one is called): found through those files, and
  // withheld with them.
  if (file.starts_with("libnvidia-egl-")) return set_of({C::kGraphics, C::kDisplay});
  if (names_library(file, kNgxLibs)) return set_of({C::kNgx});
  return std::nullopt;
}

}  // namespace

std::optional<CapabilitySet> capabilities_bringing(const std::string& container_path) {
  using C = Capability;
  const std::string file = container_path.substr(container_path.rfind('/') + 1);
  if (container_path.rfind("/dev/dri/", 0) == 0) return set_of({C::kGraphics, C::kDisplay});
  if (container_path == "/dev/nvidia-modeset") return set_of({C::kDisplay});
  if (container_path == "/dev/nvidia-uvm" || container_path == "/dev/nvidia-uvm-tools")
    return set_of({C::kCompute, C::kVideo});
  const std::string dir = container_path.substr(0, container_path.rfind('/'));
  if (is_nvidia_module(file)) {
    for (const auto& m : module_dirs()) {
      if (m.dir.front() == '/' ? dir == m.dir : dir.ends_with("/" + m.dir)) return m.caps;
    }
  }
  if (auto caps = library_capabilities(file)) return caps;
  for (Capability cap : {C::kUtility, C::kCompute}) {
    const auto names = binary_names(set_of({cap}));
    if (std::find(names.begin(), names.end(), file) != names.end()) return set_of({cap});
    for (const auto& ipc : ipc_paths(set_of({cap}))) {
      if (ipc.path == container_path) return set_of({cap});
    }
  }
  for (const auto& config : config_files()) {
    if (container_path.ends_with("/" + config.name)) return config.caps;
  }
  return std::nullopt;
}

bool needs_compute_libraries(const CapabilitySet& caps) {
  return caps.has(Capability::kCompute) || caps.has(Capability::kVideo);
}

bool needs_graphics_libraries(const CapabilitySet& caps) {
  return caps.has(Capability::kGraphics) || caps.has(Capability::kDisplay);
}

std::vector<std::string> library_prefixes(const CapabilitySet& caps) {
  std::vector<std::string> out;
  if (caps.has(Capability::kUtility)) add(out, kUtilityLibs);
  if (needs_compute_libraries(caps)) add(out, kComputeLibs);
  if (needs_compute_libraries(caps) || needs_graphics_libraries(caps))
    add(out, kComputeAndGraphicsLibs);
  if (caps.has(Capability::kVideo)) add(out, kVideoLibs);
  if (needs_graphics_libraries(caps)) add(out, kGraphicsLibs);
  if (caps.has(Capability::kNgx)) add(out, kNgxLibs);
  return out;
}

std::vector<std::string> binary_names(const CapabilitySet& caps) {
  std::vector<std::string> out;
  if (caps.has(Capability::kUtility)) add(out, kUtilityBinaries);
  if (caps.has(Capability::kCompute)) add(out, kComputeBinaries);
  return out;
}

std::vector<IpcPath> ipc_paths(const CapabilitySet& caps) {
  std::vector<IpcPath> out;
  if (caps.has(Capability::kUtility)) {
    for (const char* p :
         {"/run/nvidia-persistenced/socket", "/var/run/nvidia-persistenced/socket",
          "/run/nvidia-fabricmanager/socket", "/var/run/nvidia-fabricmanager/socket"}) {
      out.push_back({p, false});
    }
  }
  if (caps.has(Capability::kCompute)) out.push_back({"/tmp/nvidia-mps", true});
  return out;
}

const std::vector<ConfigFile>& config_files() {
  using C = Capability;
  static const CapabilitySet graphics = set_of({C::kGraphics, C::kDisplay});
  static const std::vector<ConfigFile> files = {
      {"glvnd/egl_vendor.d/10_nvidia.json", graphics},
      {"egl/egl_external_platform.d/09_nvidia_wayland2.json", graphics},
      {"egl/egl_external_platform.d/10_nvidia_wayland.json", graphics},
      {"egl/egl_external_platform.d/15_nvidia_gbm.json", graphics},
      {"egl/egl_external_platform.d/20_nvidia_xcb.json", graphics},
      {"egl/egl_external_platform.d/20_nvidia_xlib.json", graphics},
      {"vulkan/icd.d/nvidia_icd.json", graphics},
      {"vulkan/icd.d/nvidia_icd.x86_64.json", graphics},
      {"vulkan/icd.d/nvidia_layers.json", graphics},
      {"vulkan/implicit_layer.d/nvidia_layers.json", graphics},
      {"OpenCL/vendors/nvidia.icd", set_of({C::kCompute, C::kVideo})},
      {"X11/xorg.conf.d/10-nvidia.conf", graphics},
      {"X11/xorg.conf.d/nvidia-drm-outputclass.conf", graphics},
      {"nvidia/nvoptix.bin", graphics},
  };
  return files;
}

const std::vector<std::string>& config_dirs() {
  static const std::vector<std::string> dirs = {"/etc", "/usr/local/share", "/usr/share"};
  return dirs;
}

const std::vector<ModuleDir>& module_dirs() {
  using C = Capability;
  static const std::vector<ModuleDir> dirs = {
      {"vdpau", set_of({C::kVideo})},
      {"gbm", set_of({C::kGraphics, C::kDisplay})},
      {"/usr/lib/xorg/modules/drivers", set_of({C::kDisplay})},
      {"/usr/lib/xorg/modules/extensions", set_of({C::kDisplay})},
      {"/usr/lib64/xorg/modules/drivers", set_of({C::kDisplay})},
      {"/usr/lib64/xorg/modules/extensions", set_of({C::kDisplay})},
      {"/usr/lib/x86_64-linux-gnu/nvidia/xorg", set_of({C::kDisplay})},
  };
  return dirs;
}

bool is_nvidia_module(const std::string& name) {
  return name.find("nvidia") != std::string::npos && name.find(".so") != std::string::npos;
}

const std::vector<LibraryLink>& library_links() {
  static const std::vector<LibraryLink> links = {
      {"libcuda.so", "libcuda.so.1", "libcuda.so"},
      {"libnvidia-opticalflow.so", "libnvidia-opticalflow.so.1", "libnvidia-opticalflow.so"},
      // libnvidia-glcore opens it by this name; the file has no SONAME to link by.
      {"libnvidia-vulkan-producer.so", "libnvidia-vulkan-producer.so.@VERSION@",
       "libnvidia-vulkan-producer.so"},
      {"libGLX_nvidia.so", "libGLX_nvidia.so.@VERSION@", "libGLX_indirect.so.0", true},
  };
  return links;
}

}  // namespace gcr
