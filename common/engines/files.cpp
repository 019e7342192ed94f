// Reading and writing engine configuration files for gpu-ctk runtime configure.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "base/fs.h"
#include "base/text.h"
#include "engines/engines.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxEngineConfigBytes = 16u << 20;

mode_t mode_of(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
}

// Where a change is written: a configuration file that is a symlink (one a configuration
// manager keeps elsewhere) is written where it leads, the link kept.
Result<std::string> target_of(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr)
    return Error{"cannot follow the link " + path + ": " + errno_text(errno)};
  std::string target = resolved;
  ::free(resolved);
  return target;
}

// Whether `path` is a regular file (not a symlink) that configure made: no backup beside it.
bool made_by_configure(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
         ::lstat((path + ".bak").c_str(), &st) != 0 && errno == ENOENT;
}

// Whether <path>.bak is there, in any form: it is kept, never overwritten (the file as it was
// before configure first changed it, or the user's own copy).
bool backup_exists(const std::string& path) {
  struct stat st {};
  return ::lstat((path + ".bak").c_str(), &st) == 0 || errno != ENOENT;
}

Status write_one(FileChange change) {
  if (change.delete_if_made && made_by_configure(change.path)) change.content.reset();
  if (change.content) {
    auto target = target_of(change.path);
    if (!target) return target.error();
    change.path = std::move(*target);
  }
  const std::string dir = dirname_of(change.path);
  if (auto s = make_directories(dir); !s) return s;
  auto dirfd = open_directory(dir);
  if (!dirfd) return dirfd.error();
  const std::string name = basename_of(change.path);
  auto existing = read_existing(change.path);
  if (!existing) return existing.error();
  if (existing->content && change.content && change.backup && !backup_exists(change.path)) {
    auto backup = write_file_atomic_at(dirfd->get(), name + ".bak", *existing->content,
                                       FileOwner{mode_of(change.path)});
    if (!backup) return backup.error().wrap("cannot back up " + change.path);
  }
  if (!change.content) {
    if (::unlinkat(dirfd->get(), name.c_str(), 0) != 0 && errno != ENOENT) {
      return Error{"cannot remove " + change.path + ": " + errno_text(errno)};
    }
    return {};
  }
  auto written =
      write_file_atomic_at(dirfd->get(), name, *change.content, FileOwner{mode_of(change.path)});
  if (!written) return written.error().wrap("cannot write " + change.path);
  return {};
}

}  // namespace

Result<ExistingFile> read_existing(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT) return ExistingFile{path, std::nullopt};
  auto text = read_regular_file(path, kMaxEngineConfigBytes);
  if (!text) return Error{"cannot read " + path + ": " + text.error().message};
  return ExistingFile{path, std::move(*text)};
}

Result<std::vector<ExistingFile>> read_crio_sources(const ConfigureOptions& options) {
  std::vector<ExistingFile> sources;
  auto main = read_existing(options.config_path);
  if (!main) return main.error();
  sources.push_back(std::move(*main));
  const std::string dir = dirname_of(options.config_path) + "/crio.conf.d";
  const std::string ours = drop_in_path(options);
  auto fd = open_directory(dir);
  if (!fd) return sources;
  constexpr std::size_t kMaxDropIns = 4096;
  auto listed = list_directory(std::move(*fd), dir, kMaxDropIns);
  if (!listed) return listed.error().wrap("cannot list " + dir);
  for (const auto& entry : *listed) {
    const std::string path = child_path(dir, entry.name);
    struct stat st {};
    if (path == ours || path == ours + ".bak" || ::stat(path.c_str(), &st) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    auto file = read_existing(path);
    if (!file) return file.error();
    sources.push_back(std::move(*file));
  }
  return sources;
}

Status apply_changes(const std::vector<FileChange>& changes) {
  for (const auto& change : changes) {
    if (auto s = write_one(change); !s) return s;
  }
  return {};
}

std::string default_engine_config(const std::string& engine) {
  if (engine == "docker") return "/etc/docker/daemon.json";
  if (engine == "containerd") return "/etc/containerd/config.toml";
  return "/etc/crio/crio.conf";
}

std::vector<std::string> drop_ins_read_after(const ConfigureOptions& options,
                                             const ExistingFile& main_config) {
  std::vector<std::string> later;
  if (options.engine == "docker") return later;
  const std::string ours = drop_in_path(options);
  const std::string name = basename_of(ours);
  const std::string dir = dirname_of(ours);
  const bool crio = options.engine == "crio";
  // CRI-O reads its own crio.conf.d (every file, in name order), not a drop-in elsewhere.
  if (crio && dir != dirname_of(options.config_path) + "/crio.conf.d") return later;
  auto fd = open_directory(dir);
  if (!fd) return later;
  constexpr std::size_t kMaxDropIns = 4096;
  auto listed = list_directory(std::move(*fd), dir, kMaxDropIns);
  if (!listed) return later;
  for (const auto& entry : *listed) {
    // Sorted by name, as both engines read them; our own backup is removed by the plan.
    if (entry.name <= name || entry.name == name + ".bak") continue;
    const std::string path = child_path(dir, entry.name);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (crio || containerd_imports(main_config, path)) later.push_back(path);
  }
  return later;
}

std::string drop_in_path(const ConfigureOptions& options) {
  if (options.drop_in) return *options.drop_in;
  const std::string dir = dirname_of(options.config_path);
  if (options.engine == "crio") return dir + "/crio.conf.d/99-gpu-container-runtime.conf";
  return dir + "/conf.d/99-gpu-container-runtime.toml";
}

}  // namespace gcr
