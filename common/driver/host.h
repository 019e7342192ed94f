// Discovery of the host's NVIDIA driver from [driver] root and dev-root: version, GPUs,
// device nodes, libraries, binaries, IPC endpoints and firmware. Each question is answered
// on demand and remembered, so a request only pays for what it needs.
#pragma once

#include <sys/stat.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/node_stat.h"
#include "base/result.h"
#include "base/trust.h"
#include "config/config.h"
#include "driver/proc.h"
#include "driver/root_path.h"
#include "ldcache/ldcache.h"
#include "vocabulary/capabilities.h"
#include "vocabulary/device_node.h"

namespace gcr {

struct Gpu {
  unsigned index = 0;  // position in PCI bus order, as NVML numbers GPUs
  std::string model;
  std::string uuid;
  PciAddress bus;
  unsigned minor = 0;
};

// A MIG instance (GPU instance, compute instance) that exists on a GPU.
struct MigInstance {
  unsigned gpu_instance = 0;
  unsigned compute_instance = 0;
  bool operator==(const MigInstance&) const = default;
};

// A host file injected at `path` inside the container.
struct HostFile {
  std::string path;       // in-root path, which is also the container path
  std::string host_path;  // where it is on the host
};

struct DriverLibrary : HostFile {
  // The capability list entry it satisfies ("libcuda.so"), or the name a configuration file
  // gives it ("libnvidia-egl-wayland.so.1").
  std::string prefix;
  // The in-root directory the driver root's loader finds it in: `path`'s own, or the one
  // holding the link the loader follows (Debian's /usr/lib/<triplet> for nvidia/current).
  std::string loader_dir;
};

class DriverHost {
 public:
  DriverHost(Config::Driver roots, NodeStatFn stat);

  [[nodiscard]] const Config::Driver& roots() const { return roots_; }

  [[nodiscard]] Result<std::string> version();
  [[nodiscard]] Result<std::vector<Gpu>> gpus();
  // Whether the driver's parameters (dev-root proc/driver/nvidia/params) let its libraries
  // create and change device nodes (ModifyDeviceFiles: 1); false when they cannot be read.
  [[nodiscard]] bool modifies_device_files();

  // /dev/nvidia<minor> of a GPU, checked against the host node (char device, major 195).
  [[nodiscard]] Result<DeviceNode> gpu_node(const Gpu& gpu);
  // /dev/dri/card* and /dev/dri/renderD* of a GPU, as sysfs lists them (dev-root
  // sys/bus/pci/devices/<bus>/drm), checked against the host (char device, major 226). None
  // when the GPU has no DRM device (nvidia-drm not loaded); listed nodes absent from /dev skipped.
  [[nodiscard]] Result<std::vector<DeviceNode>> drm_nodes(const Gpu& gpu);
  // nvidiactl always; nvidia-uvm and nvidia-uvm-tools with compute libraries; nvidia-modeset
  // with display. Optional nodes that are absent are skipped.
  [[nodiscard]] Result<std::vector<DeviceNode>> control_nodes(const CapabilitySet& caps);
  // /dev/nvidia-caps/nvidia-cap<minor>, checked against the nvidia-caps major.
  [[nodiscard]] Result<DeviceNode> cap_node(unsigned minor);
  // /dev/nvidia-caps-imex-channels/channel<N>: its major the one /proc/devices lists for
  // nvidia-caps-imex-channels, its minor N.
  [[nodiscard]] Result<DeviceNode> imex_channel_node(unsigned channel);
  // proc/driver/nvidia-caps/mig-minors: which cap minor stands for what.
  [[nodiscard]] Result<MigMinors> mig_minors();
  // The MIG instances proc/driver/nvidia/capabilities/gpu<minor>/mig lists for a GPU.
  [[nodiscard]] std::vector<MigInstance> mig_instances(const Gpu& gpu);
  // The access-capability nodes of one instance (GPU instance, then compute instance).
  [[nodiscard]] Result<std::vector<DeviceNode>> mig_access_nodes(const Gpu& gpu,
                                                                 const MigInstance& instance);

  // The character device nodes in dev-root's `dir` whose names match the fnmatch(3)
  // `pattern`, sorted by name; entries of other types (symlinks too) are left out.
  [[nodiscard]] std::vector<DeviceNode> char_nodes(const std::string& dir,
                                                   const std::string& pattern);

  // The driver's libraries of `caps` for `arch`: each capability library of the driver's
  // version (through the root's ld.so.cache, and in the directories the libraries found there
  // live in; without a cache, in the usual directories), and each library a configuration file
  // of `caps` names (an EGL platform's libnvidia-egl-wayland.so.1), whatever its version.
  [[nodiscard]] Result<std::vector<DriverLibrary>> libraries(const CapabilitySet& caps,
                                                             LibArch arch);
  [[nodiscard]] std::vector<HostFile> binaries(const CapabilitySet& caps);
  [[nodiscard]] std::vector<HostFile> ipc_endpoints(const CapabilitySet& caps);
  [[nodiscard]] std::vector<HostFile> firmware();
  // The configuration files of `caps`: each name's first copy in the driver root's
  // config_dirs().
  [[nodiscard]] std::vector<HostFile> config_files(const CapabilitySet& caps);
  // The NVIDIA modules of `caps` in module_dirs() (below the library directories of `arch`),
  // each injected at the path it is opened by, from the file its links lead to.
  [[nodiscard]] std::vector<HostFile> modules(const CapabilitySet& caps, LibArch arch);
  // A file of `type` (S_IFREG, S_IFDIR, S_IFSOCK) at `path` in the driver root, if there is
  // one: injected at `path`, from the host file its symlinks (resolved inside the root) lead to.
  [[nodiscard]] std::optional<HostFile> driver_file(const std::string& path, mode_t type);

  // What discovery refused or could not find that a container may miss (a refused library,
  // a device the driver does not list): one line each, for the caller to log.
  void note(std::string what);
  [[nodiscard]] std::vector<std::string> take_notes();
  // Why discovery refused a library of `prefix` ("libcuda.so") it found, if it did.
  [[nodiscard]] std::optional<std::string> refusal(const std::string& prefix) const;

  // Where dev-root's files are, for messages and for tools that read them directly.
  [[nodiscard]] std::string dev_path(const std::string& in_root) const;
  [[nodiscard]] std::string driver_path(const std::string& in_root) const;

 private:
  Result<std::map<std::string, unsigned>> char_majors();
  // Whether a host file may be handed to containers: only root can change it or the path to it
  // (base/trust.h), it has `type`, and a regular file is of sane size and not a hard link. A
  // refusal is noted.
  bool vet(const std::string& host_path, mode_t type);
  Status verdict(const std::string& host_path, mode_t type);
  // vet() for a library of `prefix`, the refusal kept for refusal().
  bool vet_library(const std::string& prefix, const std::string& host_path);
  void refuse_library(const std::string& prefix, const std::string& why);
  // An in-root directory resolved inside the root and listed, once.
  struct Listing {
    std::string resolved;  // in-root path without symlinks; "" for the root
    std::set<std::string> names;
  };
  const Listing& listing(const std::string& in_root_dir);
  // The in-root path of `name` in `in_root_dir` with symlinks resolved, and its stat.
  std::optional<std::string> find_file(const std::string& in_root_dir, const std::string& name,
                                       struct stat& st);
  Result<DeviceNode> checked_node(const std::string& name, unsigned expected_major);
  DeviceNode node_from(const std::string& container_path, const NodeStat& st) const;
  // checked_node with the major /proc/devices lists for `module`.
  Result<DeviceNode> node_of_module(const std::string& name, const std::string& module);
  Result<const std::vector<LdCacheEntry>*> ld_cache();
  // The directories the driver root's own loader configuration names (etc/ld.so.conf and the
  // files it includes), resolved inside the root, but for system ones (/etc, /proc, ...): a
  // driver kept outside the usual library directories (/usr/local/nvidia/lib64) is found where
  // the host's loader finds it. Empty when the root has no readable configuration.
  const std::set<std::string>& configured_library_dirs();
  // Whether a library from the driver root's ld.so.cache may be injected from `dir`.
  bool accepted_library_directory(const std::string& dir);
  // A directory driver programs are looked for in, and where its programs are injected.
  struct BinaryDirectory {
    std::string dir;            // in-root directory searched
    std::string container_dir;  // where its programs land in the container
  };
  // The `bin` beside each configured library directory outside the usual ones
  // (/usr/local/nvidia/bin beside /usr/local/nvidia/lib64), injected under /usr/bin.
  std::vector<BinaryDirectory> driver_binary_directories();
  struct Program {
    HostFile file;
    bool elf = false;  // a program, not a script
  };
  // The first executable `name` in `dirs` that is a program (ELF); else the first script.
  std::optional<Program> find_program(const std::string& name,
                                      const std::vector<BinaryDirectory>& dirs);
  Result<std::vector<DriverLibrary>> libraries_from_cache(const std::vector<std::string>& prefixes,
                                                          LibArch arch, const std::string& version);
  std::vector<DriverLibrary> libraries_from_dirs(const std::vector<std::string>& prefixes,
                                                 LibArch arch, const std::string& version);
  // Prefixes the cache lacks, looked for beside the libraries it gave (Debian's nvidia/current
  // holds files no alternative links into the cache's directories).
  void add_beside_found(std::vector<DriverLibrary>& found, const std::vector<std::string>& prefixes,
                        const std::string& version);
  // The library a configuration file names, by SONAME in the root's cache or in the usual
  // directories; by path when the name is one.
  std::optional<DriverLibrary> named_library(const std::string& name, LibArch arch);
  std::vector<std::string> names_in_config(const HostFile& config);
  // resolve_in_root in the driver root, each leading part of a path resolved once (at most
  // kMaxResolutions kept): the driver's files share a few directories.
  Result<std::string> in_driver_root(const std::string& path);
  static constexpr std::size_t kMaxResolutions = 4096;

  Config::Driver roots_;
  NodeStatFn stat_;
  std::optional<Result<std::string>> version_;
  std::optional<Result<std::vector<Gpu>>> gpus_;
  std::optional<Result<std::map<std::string, unsigned>>> majors_;
  std::optional<Result<std::optional<std::vector<LdCacheEntry>>>> ld_cache_;
  std::optional<std::set<std::string>> configured_dirs_;
  std::map<std::string, Listing> listings_;
  // Where resolving each path asked so far stood after each of its parts (as written).
  std::map<std::string, Result<RootResolution>> resolutions_;
  TrustCheck trust_;
  std::vector<std::string> notes_;
  std::map<std::string, std::string> refusals_;  // by library prefix
};

}  // namespace gcr
