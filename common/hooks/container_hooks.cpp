#include "hooks/container_hooks.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <optional>
#include <set>

#include "base/text.h"
#include "base/trust.h"
#include "hooks/cuda_compat.h"
#include "hooks/ldcache_in_process.h"
#include "hooks/ldconfig_sandbox.h"
#include "hooks/musl_path.h"

namespace gcr {
namespace {

// The stat of our drop-in as `conf` read it, when it held `content`.
const struct stat* drop_in_read(const Result<LdSoConf>& conf, const std::string& content) {
  if (!conf) return nullptr;
  const std::string ours = kLdConfigDropInPath;
  for (std::size_t i = 0; i < conf->files.size(); ++i) {
    if (conf->files[i] == ours && conf->texts[i] == content) return &conf->file_stats[i];
  }
  return nullptr;
}

Status write_drop_in(const RootFs& root, const Result<LdSoConf>& conf,
                     const std::vector<std::string>& declared) {
  auto dir = root.make_dirs("/etc/ld.so.conf.d");
  if (!dir) return dir.error();
  const std::string content = drop_in_content(declared);
  const struct stat* read = drop_in_read(conf, content);
  if (read != nullptr && unchanged_since_read(dir->get(), kLdConfigDropIn, *read, FileOwner{}))
    return {};
  if (auto s = write_file_atomic_at(dir->get(), kLdConfigDropIn, content, FileOwner{},
                                    Durability::kNone);  // rewritten before every start
      !s) {
    return s.error().wrap("cannot write /etc/ld.so.conf.d/" + std::string(kLdConfigDropIn));
  }
  return {};
}

// Creates /etc/ld.so.conf including the drop-in directory when the image has none.
Status ensure_ld_so_conf(const RootFs& root) {
  auto etc = root.make_dirs("/etc");
  if (!etc) return etc.error();
  struct stat st {};
  if (::fstatat(etc->get(), "ld.so.conf", &st, AT_SYMLINK_NOFOLLOW) == 0) return {};
  const std::string temp = temp_name_for("ld.so.conf");
  Fd fd(::openat(etc->get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                 0644));
  if (!fd.valid()) return Error{"cannot create /etc/ld.so.conf: " + errno_text(errno)};
  Status written = write_all(fd.get(), "include /etc/ld.so.conf.d/*.conf\n");
  if (written && ::fsync(fd.get()) != 0) written = Error{errno_text(errno)};
  // RENAME_NOREPLACE: a file that appeared meanwhile is kept.
  if (written &&
      ::renameat2(etc->get(), temp.c_str(), etc->get(), "ld.so.conf", RENAME_NOREPLACE) != 0 &&
      errno != EEXIST) {
    written = Error{errno_text(errno)};
  }
  ::unlinkat(etc->get(), temp.c_str(), 0);
  if (!written) return written.error().wrap("cannot create /etc/ld.so.conf");
  return {};
}

// The link `name` to `target` in `dir`: made in place when the name is free (a first start's
// links), kept when it already links there, else replaced atomically through a temporary name.
Status place_symlink(int dir, const std::string& name, const std::string& target,
                     const std::string& link, bool* wrote) {
  if (::symlinkat(target.c_str(), dir, name.c_str()) == 0) {
    if (wrote != nullptr) *wrote = true;
    return {};
  }
  if (errno != EEXIST) return Error{"cannot create " + link + ": " + errno_text(errno)};
  char existing[4096];
  const ssize_t n = ::readlinkat(dir, name.c_str(), existing, sizeof existing);
  if (n >= 0 && std::string(existing, static_cast<std::size_t>(n)) == target) return {};
  const std::string temp = temp_name_for(name);
  if (wrote != nullptr) *wrote = true;
  if (::symlinkat(target.c_str(), dir, temp.c_str()) != 0) {
    return Error{"cannot create " + link + ": " + errno_text(errno)};
  }
  if (::renameat(dir, temp.c_str(), dir, name.c_str()) != 0) {
    const int err = errno;
    ::unlinkat(dir, temp.c_str(), 0);
    return Error{"cannot create " + link + ": " + errno_text(err)};
  }
  return {};
}

// By the time a createContainer hook runs, the container's /dev is runc's tmpfs, a mount
// RootFs's resolution does not enter: NVIDIA's specs link /dev/dri/by-path/<bus>-card to
// ../card1 there, as NVIDIA's hook crosses into it.
bool is_under_dev(const std::string& path) {
  return path == "/dev" || path.starts_with("/dev/");
}

// The directory links are made in, opened (and made) once for the links that share it.
class LinkDirectory {
 public:
  explicit LinkDirectory(const RootFs& root) : root_(root) {}
  Result<int> get(const std::string& path, bool* wrote) {
    if (!fd_ || path != path_) {
      path_ = path;
      fd_.emplace(is_under_dev(path) ? root_.make_dirs_across_mounts(path, wrote)
                                     : root_.make_dirs(path, wrote));
    }
    if (!*fd_) return fd_->error();
    return (*fd_)->get();
  }

 private:
  const RootFs& root_;
  std::string path_;
  std::optional<Result<Fd>> fd_;
};

Status create_one_symlink(LinkDirectory& dirs, const std::string& spec, bool* wrote) {
  auto parsed = parse_link_spec(spec);
  if (!parsed) return parsed.error();
  const std::string& link = parsed->link;
  if (!is_clean_absolute(link))
    return Error{"link `" + printable(link) + "` must be an absolute path without `..`"};
  const auto slash = link.rfind('/');
  auto dir = dirs.get(slash == 0 ? "/" : link.substr(0, slash), wrote);
  if (!dir) return dir.error();
  return place_symlink(*dir, link.substr(slash + 1), parsed->target, link, wrote);
}

// Debian-derived hosts that wrap ldconfig in a script keep the real binary as ldconfig.real.
std::string host_ldconfig(const std::string& path) {
  struct stat st {};
  const std::string real = path + ".real";
  return ::stat(real.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? real : path;
}

// Where the link `spec` ("<target>::<link>") leads in the root. A chain of names beside the
// link (libcuda.so -> libcuda.so.1 -> libcuda.so.<version>) is followed in its directory, to a
// file whatever is mounted on it (inside runc the libraries are bind mounts); any other is
// resolved in the root, and unknown where that crosses a mount (a volume).
enum class LinkEnd { kSomewhere, kNowhere, kUnknown };

LinkEnd link_end(const RootFs& root, const std::string& spec) {
  const auto parsed = parse_link_spec(spec);
  if (!parsed) return LinkEnd::kUnknown;
  const std::string& link = parsed->link;
  const auto dir = root.open_if_exists(dirname_of(link), O_PATH | O_DIRECTORY);
  if (!dir) return LinkEnd::kUnknown;
  if (!*dir) return LinkEnd::kNowhere;
  std::string name = basename_of(link);
  for (int hop = 0; hop < 8; ++hop) {
    char target[PATH_MAX];
    const ssize_t n = ::readlinkat((*dir)->get(), name.c_str(), target, sizeof target - 1);
    if (n < 0) {
      if (errno == ENOENT) return LinkEnd::kNowhere;
      return errno == EINVAL ? LinkEnd::kSomewhere : LinkEnd::kUnknown;  // EINVAL: no link
    }
    name.assign(target, static_cast<std::size_t>(n));
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") break;
  }
  const auto found = root.open_if_exists(link, O_PATH);
  if (!found) return LinkEnd::kUnknown;
  return *found ? LinkEnd::kSomewhere : LinkEnd::kNowhere;
}

}  // namespace

bool is_clean_absolute(const std::string& path) {
  if (path.empty() || path.front() != '/' || path == "/") return false;
  for (auto part : split(std::string_view(path).substr(1), '/')) {
    if (part.empty() || part == "." || part == "..") return false;
  }
  return true;
}

Result<LinkSpec> parse_link_spec(const std::string& spec) {
  const auto sep = spec.find("::");
  if (sep == std::string::npos || sep == 0) return Error{quote(spec) + " is not <target>::<link>"};
  return LinkSpec{spec.substr(0, sep), spec.substr(sep + 2)};
}

std::vector<std::string> link_paths(const std::vector<std::string>& specs) {
  std::vector<std::string> paths;
  for (const auto& spec : specs) {
    if (auto parsed = parse_link_spec(spec)) paths.push_back(std::move(parsed->link));
  }
  return paths;
}

std::vector<std::string> folders_to_declare(const Result<LdSoConf>& conf,
                                            const std::vector<std::string>& folders) {
  if (!conf) return folders;
  const std::string ours = kLdConfigDropInPath;
  std::set<std::string> named;
  for (std::size_t i = 0; i < conf->directories.size(); ++i) {
    if (conf->files[conf->directory_files[i]] != ours) named.insert(conf->directories[i]);
  }
  std::vector<std::string> declared;
  for (const auto& folder : folders) {
    if (!named.count(folder)) declared.push_back(folder);
  }
  return declared;
}

std::string drop_in_content(const std::vector<std::string>& declared) {
  std::string content =
      "# Written by gpu-container-runtime: driver libraries injected into this container.\n";
  for (const auto& f : declared) content += f + "\n";
  return content;
}

Result<std::string> check_ldcache_request(const std::vector<std::string>& folders,
                                          const std::string& ldconfig_spec) {
  if (ldconfig_spec.size() < 2 || ldconfig_spec.front() != '@' || ldconfig_spec[1] != '/') {
    return Error{"ldconfig `" + printable(ldconfig_spec) +
                 "` must be '@' and a host path: binaries from the container are never run"};
  }
  for (const auto& f : folders) {
    if (!is_clean_absolute(f))
      return Error{"folder `" + printable(f) + "` must be an absolute path without `..`"};
  }
  const std::string ldconfig = host_ldconfig(ldconfig_spec.substr(1));
  // It runs as root: only a binary nobody but root can replace.
  if (auto s = TrustCheck().program(ldconfig); !s) return s.error().wrap("ldconfig refused");
  // Checked whichever way the cache is written: a wrong ldconfig fails with every image.
  if (auto s = check_ldconfig(ldconfig); !s) return s.error();
  return ldconfig;
}

Status write_loader_configuration(const RootFs& root, const Result<LdSoConf>& conf,
                                  const std::vector<std::string>& declared) {
  if (!conf || !conf->exists) {
    if (auto s = ensure_ld_so_conf(root); !s) return s;
  }
  if (declared.empty()) return {};
  return write_drop_in(root, conf, declared);
}

Status update_ldcache(const RootFs& root, const std::vector<std::string>& requested,
                      const std::string& ldconfig_spec, ImageBudget& budget,
                      const std::vector<std::string>& links_made) {
  const auto folders = with_compat_first(cuda_compat_drop_in_folder(root), requested);
  auto ldconfig = check_ldcache_request(folders, ldconfig_spec);
  if (!ldconfig) return ldconfig.error();
  // Read and planned before the drop-in and ld.so.conf are written: the plan compares the
  // image's files with its cache.
  const auto conf = read_ld_so_conf(root, budget);
  const auto declared = folders_to_declare(conf, folders);
  auto plan = folders.empty() ? Result<LdcachePlan>(Error{"no folders"})
                              : plan_ldcache_update(root, conf, folders, declared, budget, {},
                                                    nullptr, link_paths(links_made));
  if (auto s = write_loader_configuration(root, conf, declared); !s) return s;
  if (auto s = add_folders_to_musl_path(root, folders); !s) return s;
  if (plan && apply_ldcache_plan(root, *plan)) return {};
  std::vector<std::string> unresolved;
  for (const auto& spec : links_made) {
    if (link_end(root, spec) != LinkEnd::kSomewhere) unresolved.push_back(spec);
  }
  const LdconfigJob job{*ldconfig, root.path(), folders};
  if (auto s = run_ldconfig_in_rootfs(job); !s) return s;
  // ldconfig makes the soname links after reading the folders: a link made to one of them
  // (libcuda.so -> libcuda.so.1) is indexed by a second run, as the in-process plan indexes it.
  // It runs again unless every link it may have passed by still leads nowhere.
  if (std::all_of(unresolved.begin(), unresolved.end(), [&](const std::string& spec) {
        return link_end(root, spec) == LinkEnd::kNowhere;
      }))
    return {};
  return run_ldconfig_in_rootfs(job);
}

Status create_symlinks(const RootFs& root, const std::vector<std::string>& links, bool* wrote) {
  LinkDirectory dirs(root);
  for (const auto& link : links) {
    if (auto s = create_one_symlink(dirs, link, wrote); !s) return s;
  }
  return {};
}

}  // namespace gcr
