// The createContainer hooks the shim injects (gpu-ctk hook update-libraries) and CDI specs carry
// (enable-cuda-compat too), and the clean-up of hooks they supersede.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "edits/edits.h"
#include "hooks/libraries_request.h"
#include "json/strict_json.h"

namespace gcr {

inline constexpr int kHookTimeoutSeconds = 30;

// gpu-ctk hook update-libraries --ldconfig-path <@path> --folder <dir>... --link <t>::<l>...
// does what create-symlinks and update-ldcache do, in one process: runc starts every hook as a
// process of its own, so one hook is one start less than two.
[[nodiscard]] Hook update_libraries_hook(const Config::Hooks& hooks,
                                         const std::vector<std::string>& folders,
                                         const std::vector<std::string>& links);

// gpu-ctk hook enable-cuda-compat --host-driver-version <version> --cuda-compat-container-root
// <dir>: the drop-in that puts the image's CUDA forward-compatibility folder first, for the
// update-libraries hook after it (hooks/cuda_compat.h). CDI specs carry it; the shim does the
// same at create.
[[nodiscard]] Hook enable_cuda_compat_hook(const Config::Hooks& hooks,
                                           const std::string& host_driver_version,
                                           const std::string& dir);

// gpu-ctk hook disable-device-node-modification: the container's view of the driver's
// parameters (hooks/driver_params.h) says ModifyDeviceFiles: 0.
[[nodiscard]] Hook disable_device_node_modification_hook(const Config::Hooks& hooks);

// Whether `hook` is one disable_device_node_modification_hook wrote: it changes nothing the
// loader cache is built from.
[[nodiscard]] bool is_device_node_modification_hook(const Json& hook, const Config::Hooks& hooks);

// gpu-ctk hook update-application-profile: the driver's EGL sees only the container's GPUs
// (hooks/app_profile.h). The shim writes the profile at create when it can, and the hook goes.
[[nodiscard]] Hook update_application_profile_hook(const Config::Hooks& hooks);

// Whether `hook` is one update_application_profile_hook wrote (our gpu-ctk, exactly those
// arguments).
[[nodiscard]] bool is_application_profile_hook(const Json& hook, const Config::Hooks& hooks);

// What an enable_cuda_compat_hook asks, read back from a spec's hook object written exactly so
// (our gpu-ctk, exactly those arguments); anything else: nothing.
struct CudaCompatRequest {
  std::string host_driver_version;
  std::string dir;
};
[[nodiscard]] std::optional<CudaCompatRequest> read_enable_cuda_compat_hook(
    const Json& hook, const Config::Hooks& hooks);

// The arguments of `hook` (a spec's hook object) when it is one update_libraries_hook wrote:
// our gpu-ctk, and exactly the arguments it writes. Anything else: nothing.
[[nodiscard]] std::optional<LibrariesRequest> read_update_libraries_hook(
    const Json& hook, const Config::Hooks& hooks);

// Removes what a GPU container no longer needs once the shim has done the work: the
// nvidia-container-runtime-hook prestart hook docker --gpus adds, the nvidia-container-cli one
// ctr --gpus adds (prestart in containerd 1.x, createRuntime in 2.1), and hooks an earlier run of
// this shim injected (so running twice on one bundle adds nothing twice).
void remove_superseded_hooks(Json& spec, const Config::Hooks& hooks);

// Removes the createContainer hook at `index` (which the spec must hold), and the lists it
// leaves empty: work the shim did at create.
void erase_created_container_hook(Json& spec, std::size_t index);

}  // namespace gcr
