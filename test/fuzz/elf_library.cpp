// What ldconfig reads from a library, read by the in-process cache update from files an image
// puts in a library folder, and the CUDA forward-compatibility note of an image's compat libcuda.
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "hooks/cuda_compat.h"
#include "ldcache/elf_library.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const int fd = ::memfd_create("elf", MFD_CLOEXEC);
  if (fd < 0 || ::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) {
    return 0;
  }
  gcr::ImageBudget budget;
  (void)gcr::read_elf_library(fd, budget, "elf");
  gcr::ImageBudget note_budget;
  auto note = gcr::read_elf_note(fd, ".note.cuda.fwd_compatibility", "NVIDIA Corporation",
                                 note_budget, "elf");
  if (note && *note) (void)gcr::parse_cuda_compat_note(**note);
  return 0;
}
