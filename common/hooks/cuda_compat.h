// CUDA forward compatibility (NVIDIA's enable-cuda-compat): an image built for a newer CUDA
// than the host's driver supports carries that CUDA's libcuda in a folder of its own (NVIDIA's
// images: /usr/local/cuda/compat/libcuda.so.<driver version>, its links and helper libraries).
// When that library is newer than the host's driver, the folder goes first in the container's
// loader cache and configuration, so libcuda.so.1 is the image's; otherwise nothing changes.
// Everything is read inside the rootfs (RootFs: no symlink leads out of it), within an image
// budget; nothing from the image runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "hooks/rootfs.h"
#include "ldcache/image_budget.h"

namespace gcr {

// The host's driver: its version ("470.57.02", from /proc/driver/nvidia/version) and, when
// known, the CUDA version its libcuda reports ("12.2").
struct HostDriver {
  std::string version;
  std::optional<std::string> cuda;
};

// NVIDIA's note in libcuda 575 and later (.note.cuda.fwd_compatibility, owner "NVIDIA
// Corporation", a JSON object): the CUDA version the library provides and the driver branches
// it runs on.
struct CudaCompatNote {
  std::string cuda_version;            // "12.9"; "" when the note gives none
  std::vector<std::uint64_t> drivers;  // 535, 550, ...
};

[[nodiscard]] Result<CudaCompatNote> parse_cuda_compat_note(std::string_view text);

struct CompatVerdict {
  bool first = false;
  std::string why;
};

// Whether the compat libcuda of driver version `compat` ("535.261.03") goes first on `host`
// (NVIDIA 1.20's rule). With a note naming driver branches: when the host's branch is one of
// them and `compat` is newer than the host's driver. Else, with the note's CUDA version and the
// host's: when the note's is newer (also where the host's driver version is not known). Else:
// when `compat`'s major is above the host's.
[[nodiscard]] CompatVerdict judge_cuda_compat(const std::string& compat,
                                              const std::optional<CudaCompatNote>& note,
                                              const HostDriver& host);

struct CudaCompat {
  std::optional<std::string> folder;  // in the root, symlinks resolved; nothing: nothing to do
  std::string why;                    // what was found and decided
};

// `dir` (an absolute path in the root) resolved, when it holds exactly one libcuda.so.<version>
// name, a regular file that is a 64-bit library with the soname libcuda.so.1, which
// judge_cuda_compat puts first. An error when the image cannot be read as expected (the library
// is no such file, its note is malformed, a budget is exceeded): nothing is done then either.
[[nodiscard]] Result<CudaCompat> find_cuda_compat(const RootFs& root, const std::string& dir,
                                                  const HostDriver& host, ImageBudget& budget);

// The drop-in gpu-ctk hook enable-cuda-compat writes (for CDI specs, whose update-libraries or
// update-ldcache hook runs after it): it sorts before our other drop-in and NVIDIA's
// 00-nvcr-*.conf, as NVIDIA's 00-compat-*.conf does.
inline constexpr const char* kCudaCompatDropIn = "00-compat-gpu-container-runtime.conf";

// Writes the drop-in naming `folder`; nothing: removes ours (an earlier start's).
[[nodiscard]] Status write_cuda_compat_drop_in(const RootFs& root,
                                               const std::optional<std::string>& folder);

// The folder our drop-in names, when it is there as write_cuda_compat_drop_in writes it;
// anything else at that name is the image's own configuration.
[[nodiscard]] std::optional<std::string> cuda_compat_drop_in_folder(const RootFs& root);

// `folders` with `first` at their head, once: the folders the loader cache is built from.
[[nodiscard]] std::vector<std::string> with_compat_first(const std::optional<std::string>& first,
                                                         std::vector<std::string> folders);

}  // namespace gcr
