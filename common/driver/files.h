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

// Graphics configuration files (graphics or display: EGL vendor and platform files, Vulkan ICD
// and layers, the OpenCL ICD, Xorg snippets, OptiX data), relative to the directories they are
// searched in, graphics_config_dirs(): the first copy found is injected.
[[nodiscard]] const std::vector<std::string>& graphics_config_names();
[[nodiscard]] const std::vector<std::string>& graphics_config_dirs();

// Links the create-symlinks hook makes beside an injected library: prefix -> (target, link
// name); "@VERSION@" in the target stands for the driver version.
struct LibraryLink {
  std::string prefix;
  std::string target;
  std::string link;
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
