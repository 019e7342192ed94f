// Which driver files each capability needs (reference/libnvidia-container.md §2-§4, §8).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vocabulary/capabilities.h"

namespace gcr {

// Library name prefixes ("libcuda.so"); the file injected is <prefix>.<driver version>.
// video implies the compute libraries and display the graphics ones, as in libnvidia-container.
[[nodiscard]] std::vector<std::string> library_prefixes(const CapabilitySet& caps);

[[nodiscard]] std::vector<std::string> binary_names(const CapabilitySet& caps);

// In-root paths of IPC endpoints: sockets (utility) and the MPS pipe directory (compute).
struct IpcPath {
  std::string path;
  bool directory;
};
[[nodiscard]] std::vector<IpcPath> ipc_paths(const CapabilitySet& caps);

// Configuration files a capability brings, relative to the directories they are searched in,
// config_dirs() (the first copy found is injected): EGL vendor and platform files, Vulkan ICDs
// and layers, Xorg snippets and OptiX data with graphics or display; the OpenCL ICD with compute,
// as the library it names is a compute one.
struct ConfigFile {
  std::string name;
  CapabilitySet caps;
};
[[nodiscard]] const std::vector<ConfigFile>& config_files();
[[nodiscard]] const std::vector<std::string>& config_dirs();

// Directories of modules other loaders open by path, not by soname: libvdpau's drivers and
// GBM's backends (`vdpau/`, `gbm/` below each library directory), the X server's drivers and
// extensions. Their NVIDIA files (names containing "nvidia") are injected where they are found,
// whatever they are called.
struct ModuleDir {
  std::string dir;  // below a library directory when relative, else an in-root path
  CapabilitySet caps;
};
[[nodiscard]] const std::vector<ModuleDir>& module_dirs();
[[nodiscard]] bool is_nvidia_module(const std::string& name);

// Links the create-symlinks hook makes for an injected library: prefix -> (target, link
// name); "@VERSION@" in the target stands for the driver version. The link goes beside the
// library, or with `loader_dir` in the directory the driver root's loader finds the library
// in (libGLX_indirect.so.0 is opened by that name, and the loader finds a link that is not
// a SONAME only in the directories it searches itself).
struct LibraryLink {
  std::string prefix;
  std::string target;
  std::string link;
  bool loader_dir = false;
};
[[nodiscard]] const std::vector<LibraryLink>& library_links();

// The capabilities any one of which brings the driver file or device node at `container_path`
// into a container (a library by its name, a binary, an IPC endpoint, a graphics
// configuration file, /dev/dri/*, /dev/nvidia-modeset, /dev/nvidia-uvm*); nullopt for a path
// that is not one of the driver's capability-bound files.
[[nodiscard]] std::optional<CapabilitySet> capabilities_bringing(const std::string& container_path);

// True when compute libraries (and so the UVM nodes) are part of `caps`.
[[nodiscard]] bool needs_compute_libraries(const CapabilitySet& caps);
[[nodiscard]] bool needs_graphics_libraries(const CapabilitySet& caps);

}  // namespace gcr
