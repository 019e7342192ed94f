// nvidia-ctk's flag spellings for the gpu-ctk commands we share: each NVIDIA spelling becomes
// ours, is accepted without effect where our behaviour already is what it asks (and README's
// table says so), or is refused with the reason. gpu-ctk accepts them too, so a command copied
// from NVIDIA's documentation works under either name.
#pragma once

#include <functional>
#include <optional>
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

// An environment variable's value, if it is set.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// nvidia-ctk reads each flag of `cdi generate` the command line does not give from an
// environment variable (NVIDIA_CTK_CDI_OUTPUT_FILE_PATH, NVIDIA_CTK_DRIVER_ROOT, ...: what
// nvidia-cdi-refresh.service and its env file set): those flags, in our spelling, for the flags
// `args` (the command line, as typed) lacks; a variable whose flag is refused is an error naming
// it. None for other commands.
[[nodiscard]] Result<std::vector<std::string>> nvidia_env_flags(
    const std::string& command, const std::vector<std::string>& args, const EnvLookup& env);

// nvidia-ctk's defaults where ours differ, added to `args` (in our spelling): `cdi generate`'s
// --dev-root is its --driver-root when only that is given.
[[nodiscard]] std::vector<std::string> with_nvidia_defaults(const std::string& command,
                                                            std::vector<std::string> args);

// nvidia-container-runtime-hook's flags before its stage, read as Go's flag package reads them:
// `-debug`, `-version` (switches, `=true|false` allowed), `-config FILE` or `-config=FILE`, with
// one dash or two; the first other argument (or `--`) ends them. -debug and -config change
// nothing here (our configuration is read, NVIDIA's is not); an unknown flag is an error.
struct LegacyHookArgs {
  bool version = false;
  std::vector<std::string> rest;  // the stage and what follows it
};
[[nodiscard]] Result<LegacyHookArgs> read_legacy_hook_flags(const std::vector<std::string>& args);

}  // namespace gcr
