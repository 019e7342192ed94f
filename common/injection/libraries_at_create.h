// The update-libraries hook's work done while the shim handles `create` (hooks/
// libraries_at_create.h says when that gives the hook's result): the container then starts
// without the hook, one process and runc's handling of it less.
#pragma once

#include <optional>
#include <string>

#include "config/config.h"
#include "hooks/libraries_at_create.h"
#include "hooks/libraries_request.h"
#include "hooks/rootfs.h"
#include "json/strict_json.h"
#include "log/log.h"

namespace gcr {

// The spec's rootfs for the work done at create (`bundle` as runc was given it, "" the working
// directory), opened when first asked for and kept: an error when it cannot be opened or runc
// would refuse it (a symlink, the host's root). `spec`'s root.path must not change meanwhile.
class ContainerRootFs {
 public:
  ContainerRootFs(const Json& spec, std::string bundle) : spec_(spec), bundle_(std::move(bundle)) {}
  [[nodiscard]] const Result<RootFs>& get();
  [[nodiscard]] const std::string& bundle() const { return bundle_; }
  // The spec's mounts and device nodes as runc will make them (injection/runc_to_come.h), and
  // where each lands in the rootfs, worked out when first asked for and kept: the spec's mounts
  // and devices must not change meanwhile.
  [[nodiscard]] const Result<LandedMounts>& landed_mounts();
  // What resolving paths in the rootfs learnt, for all of this create's work in it: whoever
  // writes in the rootfs keeps it true (ResolvedDirs::forget_what_writes_change).
  [[nodiscard]] ResolvedDirs& known() { return known_; }

 private:
  const Json& spec_;
  std::string bundle_;
  std::optional<Result<RootFs>> root_;
  ResolvedDirs known_;
  std::optional<Result<LandedMounts>> landed_;
};

// CUDA forward compatibility, decided at create on the image as it is before runc's mounts:
// when the image's compat folder holds a libcuda newer than the host's driver
// (hooks/cuda_compat.h), puts it first among the folders of the libraries request (`libraries`,
// the live driver's, or else the update-libraries hook `spec` holds, a CDI spec's), so the loader
// cache (written by that hook or at create) and our drop-in list it first. What is asked comes
// from our enable-cuda-compat hook in the spec (a CDI spec's), which is then removed, or else,
// for the driver's libcuda the shim gave the container (`live_driver_version`, the host's
// driver), from `[requests] cuda-compat-dir`. When the rootfs (`root`) cannot be opened,
// nothing changes; why nothing is done is logged.
void put_cuda_compat_first(Json& spec, std::optional<LibrariesRequest>& libraries,
                           ContainerRootFs& root, const Config& config,
                           const std::optional<std::string>& live_driver_version,
                           const Logger& logger);

// Does the work of the libraries request: `libraries` (the live driver's) or else the
// update-libraries hook `spec` holds (a CDI spec's), which is then removed. When the work must
// wait for the hook (said at debug level), `libraries` is written into the spec as its hook, at
// `hook_at` among the createContainer hooks (where the edits' own hooks begin); a hook the spec
// holds stays. `root` is the spec's rootfs.
void run_library_hook_at_create(Json& spec, const std::optional<LibrariesRequest>& libraries,
                                std::size_t hook_at, ContainerRootFs& root, const Config& config,
                                const Logger& logger);

}  // namespace gcr
