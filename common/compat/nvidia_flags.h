// nvidia-ctk's flag spellings for the gpu-ctk commands we share: each NVIDIA spelling becomes
// ours, is accepted without effect where our behaviour already is what it asks (and README's
// table says so), or is refused with the reason. gpu-ctk accepts them too, so a command copied
// from NVIDIA's documentation works under either name.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"

namespace gcr {

// `command` is the gpu-ctk command path ("runtime configure", "cdi generate", "cdi list",
// "hook update-ldcache", "hook create-symlinks", "config", "info",
// "system create-dev-char-symlinks"). Flags of neither spelling are left for the command's own
// parser, which rejects them by name. `as_nvidia_ctk` (invoked under that name) reads as
// nvidia-ctk does: `-name` is `--name`, and an --ldconfig-path without '@' names a host program
// (written `@PATH`); under gpu-ctk's name such a path stays as given, which the hook refuses (a
// path inside the container is never run; `cdi generate` itself always writes its
// --ldconfig-path as a host path).
[[nodiscard]] Result<std::vector<std::string>> translate_nvidia_flags(
    const std::string& command, const std::vector<std::string>& args, bool as_nvidia_ctk);

}  // namespace gcr
