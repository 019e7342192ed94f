#include "cdi/registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <set>
#include <utility>

#include "base/fs.h"
#include "base/text.h"
#include "base/trust.h"
#include "cdi/yaml.h"

namespace gcr {
namespace {

// Root-owned and not writable by group or others: nobody but root can add hooks through it.
Status check_trust(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{errno_text(errno)};
  return owned_by_root_only(st);
}

// Where `name` is a symlink, the folders of the file it led to (`found`): root's alone, as the
// spec folder is, or whoever may write one of them picks the file read.
Status check_link_folders(int dirfd, const std::string& name, const Fd& found) {
  struct stat link {};
  if (::fstatat(dirfd, name.c_str(), &link, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(link.st_mode))
    return {};
  char target[PATH_MAX];
  const std::string self = "/proc/self/fd/" + std::to_string(found.get());
  const ssize_t n = ::readlink(self.c_str(), target, sizeof target - 1);
  if (n <= 0) return Error{"cannot name the file it links to: " + errno_text(errno)};
  const std::string file(target, static_cast<std::size_t>(n));
  if (auto s = TrustCheck().directory(dirname_of(file)); !s)
    return s.error().wrap("the folder of " + file + ", which it links to");
  return {};
}

// A symlink is followed, as the CDI library reads a spec file: what is read is judged by the
// file it leads to (a regular file, root's alone where `trusted`), through the fd judged.
Result<std::string> read_spec_text(int dirfd, const std::string& name, bool trusted) {
  Fd found(::openat(dirfd, name.c_str(), O_PATH | O_CLOEXEC));
  if (!found.valid()) return Error{errno_text(errno)};
  struct stat st {};
  if (::fstat(found.get(), &st) != 0) return Error{errno_text(errno)};
  if (!S_ISREG(st.st_mode)) return Error{"is not a regular file"};
  if (static_cast<std::size_t>(st.st_size) > kMaxCdiSpecBytes) {
    return Error{"larger than " + std::to_string(kMaxCdiSpecBytes) + " bytes"};
  }
  if (trusted) {
    if (auto s = owned_by_root_only(st); !s) return s.error();
    if (auto s = check_link_folders(dirfd, name, found); !s) return s.error();
  }
  auto fd = reopen_regular(found, name);
  if (!fd) return fd.error();
  return read_fd(fd->get(), kMaxCdiSpecBytes);
}

Result<CdiSpec> read_spec_at(int dirfd, const std::string& name, bool trusted) {
  if (!name.ends_with(".json") && !name.ends_with(".yaml"))
    return Error{"the file name must end in .json or .yaml"};
  auto text = read_spec_text(dirfd, name, trusted);
  if (!text) return text.error();
  return parse_cdi_spec_either(*text);
}

std::vector<std::string> spec_names(int dirfd) {
  std::vector<std::string> names;
  Fd copy(::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  DIR* dir = copy.valid() ? ::fdopendir(copy.release()) : nullptr;
  if (dir == nullptr) return names;
  while (const dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (e->d_type == DT_DIR) continue;  // no spec, as the CDI library's walk of the folder
    if (name.ends_with(".json") || name.ends_with(".yaml")) names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

void add_devices(CdiRegistry& registry, std::size_t spec_index, std::set<std::string>& conflicts) {
  const CdiSpecFile& file = registry.specs[spec_index];
  for (std::size_t d = 0; d < file.spec.devices.size(); ++d) {
    const std::string name = file.spec.kind + "=" + file.spec.devices[d].name;
    const auto existing = registry.devices.find(name);
    if (existing != registry.devices.end() &&
        registry.specs[existing->second.first].priority == file.priority) {
      const std::string other = registry.specs[existing->second.first].path;
      registry.errors.push_back(file.path + ": conflicting device " + name + " (also in " + other +
                                ")");
      registry.errors.push_back(other + ": conflicting device " + name + " (also in " + file.path +
                                ")");
      conflicts.insert(name);
      continue;
    }
    registry.devices[name] = {spec_index, d};
  }
}

}  // namespace

Result<CdiSpec> parse_cdi_spec_text(const std::string& text, bool json) {
  auto doc = json ? parse_json_strict(text) : yaml_to_json(text);
  if (!doc) return doc.error();
  auto spec = cdi_spec_from_json(std::move(*doc));
  if (!spec) return spec.error();
  if (auto s = validate_cdi_spec(*spec); !s) return s.error();
  return spec;
}

Result<CdiSpec> parse_cdi_spec_either(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return parse_cdi_spec_text(text, false);
  auto json = parse_cdi_spec_text(text, true);
  if (json) return json;
  auto yaml = parse_cdi_spec_text(text, false);
  return yaml ? yaml : json;
}

Result<CdiSpec> read_cdi_spec_file(const std::string& path, bool trusted) {
  auto dirfd = open_directory(dirname_of(path));
  if (!dirfd) return dirfd.error();
  return read_spec_at(dirfd->get(), basename_of(path), trusted);
}

CdiRegistry load_cdi_registry(const std::vector<std::string>& dirs) {
  CdiRegistry registry;
  std::set<std::string> conflicts;
  for (std::size_t priority = 0; priority < dirs.size(); ++priority) {
    Fd dirfd(::open(dirs[priority].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dirfd.valid()) {
      if (errno != ENOENT) registry.errors.push_back(dirs[priority] + ": " + errno_text(errno));
      continue;
    }
    if (auto s = check_trust(dirfd.get()); !s) {
      registry.errors.push_back(dirs[priority] + ": refused: " + s.error().message);
      continue;
    }
    for (const auto& name : spec_names(dirfd.get())) {
      const std::string path = dirs[priority] + "/" + name;
      auto spec = read_spec_at(dirfd.get(), name, true);
      if (!spec) {
        registry.errors.push_back(path + ": " + spec.error().message);
        continue;
      }
      registry.specs.push_back(CdiSpecFile{path, priority, std::move(*spec)});
      add_devices(registry, registry.specs.size() - 1, conflicts);
    }
  }
  for (const auto& name : conflicts) registry.devices.erase(name);
  return registry;
}

Result<ContainerEdits> cdi_edits_for(const CdiRegistry& registry,
                                     const std::vector<std::string>& names) {
  std::vector<std::string> unresolved;
  for (const auto& name : names) {
    if (registry.devices.count(name) == 0) unresolved.push_back(name);
  }
  if (!unresolved.empty()) {
    std::string message = "unresolvable CDI devices " + printable(join(unresolved, ", "), 512);
    if (!registry.errors.empty()) {
      message += " (" + std::to_string(registry.errors.size()) +
                 " spec problem(s), first: " + registry.errors.front() + ")";
    }
    return Error{message};
  }
  ContainerEdits merged;
  std::set<std::size_t> globals_added;
  for (const auto& name : names) {
    const auto [spec_index, device_index] = registry.devices.at(name);
    const CdiSpec& spec = registry.specs[spec_index].spec;
    if (globals_added.insert(spec_index).second) merged.append(spec.edits);
    merged.append(spec.devices[device_index].edits);
  }
  return merged;
}

}  // namespace gcr
