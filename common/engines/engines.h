// gpu-ctk runtime configure: registering gpu-container-runtime with Docker, containerd and
// CRI-O. Planning is pure (existing file contents in, file changes out) so every engine's
// rules are testable; applying writes atomically and keeps a .bak of each rewritten file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace gcr {

struct ConfigureOptions {
  std::string engine;                  // docker | containerd | crio
  std::string config_path;             // the engine's main configuration file
  std::optional<std::string> drop_in;  // containerd/CRI-O drop-in file (default: beside the config)
  std::string runtime_name = "nvidia";
  std::string runtime_path = "/usr/bin/gpu-container-runtime";
  std::vector<std::string> runtime_args;  // docker runtimeArgs (e.g. --gpu-config=FILE)
  bool set_as_default = false;
  bool cdi = false;
  bool remove = false;
};

// One file's new content; nullopt content means the file is deleted. `backup`: the file it
// replaces is kept as <path>.bak beside it unless one is there already (the file before
// configure first changed it, or the user's copy, is never overwritten), which a file in a
// directory the engine reads whole (CRI-O reads every file of crio.conf.d, .bak ones too) must not
// be.
struct FileChange {
  std::string path;
  std::optional<std::string> content;
  bool backup = true;
  // `content` is what is left of an engine's file after --remove, nothing of the user's: the
  // file is deleted instead where configure made it (a regular file with no <path>.bak beside
  // it), else written (through a symlink, to where it leads).
  bool delete_if_made = false;
};

struct ExistingFile {
  std::string path;
  std::optional<std::string> content;  // nullopt: the file does not exist
};

// The name of containerd's CRI plugin in a configuration of `version` (1 to 4).
[[nodiscard]] std::string containerd_cri_plugin(int version);

// The default main configuration file of an engine.
[[nodiscard]] std::string default_engine_config(const std::string& engine);
// The drop-in a containerd/CRI-O configuration uses (options.drop_in or its default).
[[nodiscard]] std::string drop_in_path(const ConfigureOptions& options);

// Changes that make the files say what `options` asks; files already saying it are not
// listed (running twice changes nothing). A malformed existing file is an error naming it.
[[nodiscard]] Result<std::vector<FileChange>> plan_docker(const ConfigureOptions& options,
                                                          const ExistingFile& daemon_json);
[[nodiscard]] Result<std::vector<FileChange>> plan_containerd(const ConfigureOptions& options,
                                                              const ExistingFile& config,
                                                              const ExistingFile& drop_in);
// `old_backup`: <drop-in>.bak, which an earlier version kept in crio.conf.d, where CRI-O reads
// it after the drop-in (and so undoes it): removed. `sources`: CRI-O's other files, in the order
// it reads them (read_crio_sources), whose handler ours copies.
[[nodiscard]] Result<std::vector<FileChange>> plan_crio(
    const ConfigureOptions& options, const ExistingFile& drop_in,
    const ExistingFile& old_backup = {}, const std::vector<ExistingFile>& sources = {});

// The files of the drop-in's directory the engine reads after it, so that what they set wins
// (NVIDIA's 99-nvidia.toml, left by nvidia-ctk, is one): those `main_config`'s imports name
// for containerd (none for a version 1 file, which gets no drop-in), every one for CRI-O when
// the drop-in is in its crio.conf.d. Docker has none.
[[nodiscard]] std::vector<std::string> drop_ins_read_after(const ConfigureOptions& options,
                                                           const ExistingFile& main_config);

// The disabled_plugins entry of containerd's `main_config` that turns its CRI plugin off
// ("cri", as Docker's containerd.io package ships it, or the plugin's full name), if any: a
// runtime registered there is never used by Kubernetes.
[[nodiscard]] std::optional<std::string> containerd_cri_disabled(const ExistingFile& main_config);

// Whether containerd, reading `main_config` (version 2 to 4), imports `path`: named, or
// matched by an import's pattern.
[[nodiscard]] bool containerd_imports(const ExistingFile& main_config, const std::string& path);

// CRI-O's configuration files but our drop-in (and its .bak), in the order CRI-O reads them:
// the main file, then every regular file of crio.conf.d beside it, by name.
[[nodiscard]] Result<std::vector<ExistingFile>> read_crio_sources(const ConfigureOptions& options);

// Reads a file for planning (missing is not an error).
[[nodiscard]] Result<ExistingFile> read_existing(const std::string& path);

// Writes each change atomically (parent directories created), after copying a file that is
// rewritten to <path>.bak where the change asks for it and there is none. Deleted files (our own
// drop-ins) get no backup.
[[nodiscard]] Status apply_changes(const std::vector<FileChange>& changes);

}  // namespace gcr
