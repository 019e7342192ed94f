// The driver's files in [driver] root: its libraries (found through the root's own loader
// cache and configuration), programs, configuration files, modules, IPC endpoints and
// firmware, each vetted before a container gets it (base/trust.h). Each question is answered
// on demand and remembered, so a request only pays for what it needs.
#pragma once

#include <sys/stat.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/trust.h"
#include "driver/device_nodes.h"
#include "driver/host_fs.h"
#include "driver/notes.h"
#include "driver/root_path.h"
#include "ldcache/elf_library.h"
#include "ldcache/ldcache.h"
#include "vocabulary/capabilities.h"

namespace gcr {

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
  // Its soname and loader flags, when read as the discovery cache kept the file set: they hold
  // while the file keeps the stamp it had then (the loader-cache step uses them instead of
  // reading the file again).
  std::optional<ElfLibrary> elf;
};

// The driver root's ld.so.cache as read: its bytes, and its entries as views of them.
struct RootLdCache {
  std::string data;
  std::vector<LdCacheRef> entries;
};

// Every driver file a container of some capabilities gets from the root but its IPC endpoints
// (a daemon's socket comes and goes): what the discovery cache (discovery_cache/) may keep.
struct DriverFileSet {
  std::vector<DriverLibrary> libraries;  // 64-bit, then 32-bit with compat32
  std::vector<HostFile> binaries;
  std::vector<HostFile> firmware;
  std::vector<HostFile> config_files;
  std::vector<HostFile> modules;  // 64-bit, then 32-bit with compat32
};

class DriverRootFiles {
 public:
  // `root`'s files read through `fs` and judged by `trust`; the driver's version is the one
  // `devices` reads; refusals and what a container may miss are added to `notes`.
  DriverRootFiles(std::string root, DeviceNodes& devices, HostFs& fs, FileTrust& trust,
                  Notes& notes);

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
  // libraries, binaries, firmware, config_files and modules of `caps`, for each architecture
  // `caps` asks for.
  [[nodiscard]] Result<DriverFileSet> file_set(const CapabilitySet& caps);

  // Why discovery refused a library of `prefix` ("libcuda.so") it found, if it did.
  [[nodiscard]] std::optional<std::string> refusal(const std::string& prefix) const;

  // Where the driver root's files are, for messages and for tools that read them directly.
  [[nodiscard]] std::string driver_path(const std::string& in_root) const;
  [[nodiscard]] const std::string& root() const { return root_; }

 private:
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
  // An in-root directory resolved inside the root ("" for the root itself), if it resolves.
  std::optional<std::string> resolved_dir(const std::string& in_root_dir);
  // The in-root path of `name` in `in_root_dir` with symlinks resolved, and its stat: one
  // lstat, not a listing (a host's library directory holds a thousand names).
  std::optional<std::string> find_file(const std::string& in_root_dir, const std::string& name,
                                       struct stat& st);
  Result<const std::vector<LdCacheRef>*> ld_cache();
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
  // resolve_in_root in the driver root, each answer remembered (HostFs::resolve_in_root).
  Result<std::string> in_driver_root(const std::string& path);

  std::string root_;
  DeviceNodes& devices_;
  HostFs& fs_;
  FileTrust& trust_;
  Notes& notes_;
  std::optional<Result<std::unique_ptr<RootLdCache>>> ld_cache_;  // null: the root has none
  std::optional<std::set<std::string>> configured_dirs_;
  std::map<std::string, Listing> listings_;
  std::map<std::string, std::string> refusals_;  // by library prefix
};

}  // namespace gcr
