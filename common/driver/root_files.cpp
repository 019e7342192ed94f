#include "driver/root_files.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <set>
#include <span>
#include <string_view>
#include <utility>

#include "base/child_process.h"
#include "base/text.h"
#include "driver/files.h"
#include "json/strict_json.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxLdCacheBytes = 64u << 20;

constexpr std::string_view kLibDirs64[] = {"/usr/lib/x86_64-linux-gnu",
                                           "/usr/lib/x86_64-linux-gnu/nvidia/current",
                                           "/usr/lib64",
                                           "/lib/x86_64-linux-gnu",
                                           "/lib64",
                                           "/usr/lib",
                                           "/lib"};
constexpr std::string_view kLibDirs32[] = {
    "/usr/lib/i386-linux-gnu", "/usr/lib32", "/lib/i386-linux-gnu", "/lib32", "/usr/lib", "/lib"};
// Where module directories (vdpau/, gbm/) are looked for.
constexpr std::string_view kModuleBases64[] = {"/usr/lib/x86_64-linux-gnu", "/usr/lib64",
                                               "/usr/lib"};
constexpr std::string_view kModuleBases32[] = {"/usr/lib/i386-linux-gnu", "/usr/lib32", "/usr/lib"};
// A configuration file naming a library is a few hundred bytes; more is not one of the driver's.
constexpr std::size_t kMaxConfigFileBytes = 64 * 1024;

std::span<const std::string_view> library_dirs(LibArch arch) {
  return arch == LibArch::k64 ? std::span<const std::string_view>(kLibDirs64)
                              : std::span<const std::string_view>(kLibDirs32);
}

// The library names a JSON file gives in "library_path" (EGL vendor and platform files, Vulkan
// ICDs and layers: {"ICD": {...}}, {"layer": {...}}, {"layers": [...]}).
std::vector<std::string> json_library_paths(const Json& json) {
  std::vector<std::string> out;
  auto take = [&](const Json& object) {
    if (!object.is_object()) return;
    const auto it = object.find("library_path");
    if (it != object.end() && it->is_string()) out.push_back(it->get<std::string>());
  };
  if (!json.is_object()) return out;
  for (const char* key : {"ICD", "layer"}) {
    if (json.contains(key)) take(json[key]);
  }
  if (json.contains("layers") && json["layers"].is_array()) {
    for (const auto& layer : json["layers"]) take(layer);
  }
  return out;
}

// Whether a file starts with the ELF magic: a program, not a script.
bool is_elf(HostFs& fs, const std::string& host_path) {
  return fs.head(host_path, 4) ==
         "\x7f"
         "ELF";
}

// The ELF class and machine of a file: x86_64 -> k64, i386 -> k32.
LibArch elf_arch(HostFs& fs, const std::string& host_path) {
  const std::string bytes = fs.head(host_path, 20);
  if (bytes.size() != 20 || !bytes.starts_with("\x7f"
                                               "ELF")) {
    return LibArch::kOther;
  }
  const auto* header = reinterpret_cast<const unsigned char*>(bytes.data());
  const unsigned machine = header[18] | (header[19] << 8);
  if (header[4] == 2 && machine == 62) return LibArch::k64;
  if (header[4] == 1 && machine == 3) return LibArch::k32;
  return LibArch::kOther;
}

bool is_file_type(HostFs& fs, const std::string& host_path, mode_t type) {
  struct stat st {};
  return fs.stat(host_path, st) && (st.st_mode & S_IFMT) == type;
}

// Where libraries may be injected: /lib, /usr/lib and /usr/local/lib and their 32/64/x32
// variants, and below them. An ld.so.cache entry elsewhere (/etc, /proc, /root) is refused.
bool is_library_directory(const std::string& dir) {
  for (const char* base : {"/lib", "/lib32", "/lib64", "/libx32", "/usr/lib", "/usr/lib32",
                           "/usr/lib64", "/usr/libx32", "/usr/local/lib", "/usr/local/lib64"}) {
    if (path_is_under(dir, base)) return true;
  }
  return false;
}

// Where no library the driver root's loader configuration names is taken from, whatever it
// says: configuration, pseudo filesystems, homes, temporary and boot files.
bool is_system_directory(const std::string& dir) {
  if (dir == "/") return true;
  for (const char* base : {"/etc", "/proc", "/sys", "/dev", "/root", "/home", "/tmp", "/var/tmp",
                           "/boot", "/run", "/bin", "/sbin", "/usr/bin", "/usr/sbin"}) {
    if (path_is_under(dir, base)) return true;
  }
  return false;
}

constexpr off_t kMaxDriverFileBytes = off_t{1} << 30;

// A file from the driver root mounted into containers: not absurdly large, and not a hard link
// on a writable filesystem (a link to a host file placed at a library's name; an image-based
// system's read-only /usr may hold links nobody can add to).
Status check_regular_source(HostFs& fs, const std::string& path, const struct stat& st) {
  if (st.st_size > kMaxDriverFileBytes) return Error{"larger than 1 GiB"};
  if (st.st_nlink > 1 && !fs.read_only_fs(path))
    return Error{"a hard link (" + std::to_string(st.st_nlink) +
                 " names) on a writable filesystem"};
  return {};
}

// The driver root's ld.so.cache, its entries views of the bytes it keeps; none when the root has
// no cache.
Result<std::unique_ptr<RootLdCache>> load_ld_cache(HostFs& fs, const std::string& path) {
  struct stat st {};
  if (!fs.lstat(path, st) && errno == ENOENT) return std::unique_ptr<RootLdCache>();
  auto data = fs.read_file(path, kMaxLdCacheBytes);
  if (!data)
    return Error{"cannot read the driver root's ld.so.cache: " + data.error().message + " (" +
                 path + ")"};
  auto cache = std::make_unique<RootLdCache>();
  cache->data = std::move(*data);
  // The host's own file, bounded all the same (but for time: it is not an image's).
  ImageBudget budget = ImageBudget::untimed();
  auto read = read_ld_cache(cache->data, budget, "");
  if (!read)
    return Error{"cannot read the driver root's ld.so.cache: " + read.error().message + " (" +
                 path + ")"};
  cache->entries = std::move(read->entries);
  return cache;
}

}  // namespace

DriverRootFiles::DriverRootFiles(std::string root, DeviceNodes& devices, HostFs& fs,
                                 FileTrust& trust, Notes& notes)
    : root_(std::move(root)), devices_(devices), fs_(fs), trust_(trust), notes_(notes) {}

Result<DriverFileSet> DriverRootFiles::file_set(const CapabilitySet& caps) {
  std::vector<LibArch> arches{LibArch::k64};
  if (caps.has(Capability::kCompat32)) arches.push_back(LibArch::k32);
  DriverFileSet set;
  for (LibArch arch : arches) {
    auto found = libraries(caps, arch);
    if (!found) return found.error();
    set.libraries.insert(set.libraries.end(), found->begin(), found->end());
  }
  set.binaries = binaries(caps);
  set.firmware = firmware();
  set.config_files = config_files(caps);
  for (LibArch arch : arches) {
    auto found = modules(caps, arch);
    set.modules.insert(set.modules.end(), found.begin(), found.end());
  }
  return set;
}

std::string DriverRootFiles::driver_path(const std::string& in_root) const {
  return join_root(root_, in_root);
}

Result<const std::vector<LdCacheRef>*> DriverRootFiles::ld_cache() {
  if (!ld_cache_) ld_cache_ = load_ld_cache(fs_, driver_path("/etc/ld.so.cache"));
  if (!ld_cache_->ok()) return ld_cache_->error();
  const auto& cache = ld_cache_->value();
  return cache ? &cache->entries : nullptr;
}

Result<std::vector<DriverLibrary>> DriverRootFiles::libraries_from_cache(
    const std::vector<std::string>& prefixes, LibArch arch, const std::string& version) {
  auto cache = ld_cache();
  if (!cache) return cache.error();
  std::map<std::string, DriverLibrary> chosen;  // prefix -> the last acceptable entry
  for (const auto& entry : **cache) {
    if (entry.arch != arch) continue;
    for (const auto& prefix : prefixes) {
      if (!entry.soname.starts_with(prefix)) continue;
      auto resolved = in_driver_root(std::string(entry.path));
      if (!resolved || basename_of(*resolved) != prefix + "." + version) continue;
      if (!accepted_library_directory(dirname_of(*resolved))) {
        refuse_library(prefix, driver_path(*resolved) +
                                   " from the driver root's ld.so.cache: not in a library "
                                   "directory (a standard one, or one the root's "
                                   "etc/ld.so.conf names outside the system directories)");
        continue;
      }
      if (!vet_library(prefix, driver_path(*resolved))) continue;
      auto loader_dir = in_driver_root(dirname_of(std::string(entry.path)));
      chosen[prefix] = DriverLibrary{{*resolved, driver_path(*resolved)},
                                     prefix,
                                     loader_dir && accepted_library_directory(*loader_dir)
                                         ? *loader_dir
                                         : dirname_of(*resolved),
                                     std::nullopt};
    }
  }
  std::vector<DriverLibrary> out;
  for (auto& [prefix, lib] : chosen) out.push_back(std::move(lib));
  return out;
}

Result<std::string> DriverRootFiles::in_driver_root(const std::string& path) {
  return fs_.resolve_in_root(root_, path);
}

const DriverRootFiles::Listing& DriverRootFiles::listing(const std::string& in_root_dir) {
  auto it = listings_.find(in_root_dir);
  if (it != listings_.end()) return it->second;
  Listing listing;
  if (auto dir = resolved_dir(in_root_dir)) {
    listing.resolved = *dir;
    for (auto& name : fs_.list(driver_path(dir->empty() ? "/" : *dir)))
      listing.names.insert(std::move(name));
  }
  return listings_.emplace(in_root_dir, std::move(listing)).first->second;
}

std::optional<std::string> DriverRootFiles::resolved_dir(const std::string& in_root_dir) {
  auto dir = in_driver_root(in_root_dir);
  if (!dir) return std::nullopt;
  return *dir == "/" ? std::string() : *dir;
}

std::optional<std::string> DriverRootFiles::find_file(const std::string& in_root_dir,
                                                      const std::string& name, struct stat& st) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return std::nullopt;
  const auto dir = resolved_dir(in_root_dir);
  if (!dir) return std::nullopt;
  std::string path = *dir + "/" + name;
  if (!fs_.lstat(driver_path(path), st)) return std::nullopt;
  if (!S_ISLNK(st.st_mode)) return path;
  auto resolved = in_driver_root(path);
  if (!resolved || !fs_.stat(driver_path(*resolved), st)) return std::nullopt;
  return *resolved;
}

std::vector<DriverLibrary> DriverRootFiles::libraries_from_dirs(
    const std::vector<std::string>& prefixes, LibArch arch, const std::string& version) {
  std::vector<DriverLibrary> out;
  for (const auto& prefix : prefixes) {
    for (const std::string_view dir : library_dirs(arch)) {
      struct stat st {};
      auto found = find_file(std::string(dir), prefix + "." + version, st);
      if (!found || !vet_library(prefix, driver_path(*found))) continue;
      // /usr/lib and /lib hold either word size; the other directories hold one.
      if ((dir == "/usr/lib" || dir == "/lib") && elf_arch(fs_, driver_path(*found)) != arch)
        continue;
      const auto in = resolved_dir(std::string(dir)).value_or("");
      out.push_back(DriverLibrary{{*found, driver_path(*found)},
                                  prefix,
                                  in.empty() ? dirname_of(*found) : in,
                                  std::nullopt});
      break;
    }
  }
  return out;
}

void DriverRootFiles::add_beside_found(std::vector<DriverLibrary>& found,
                                       const std::vector<std::string>& prefixes,
                                       const std::string& version) {
  std::set<std::string> dirs;
  std::set<std::string> have;
  for (const auto& lib : found) {
    dirs.insert(dirname_of(lib.path));
    have.insert(lib.prefix);
  }
  const LibArch arch = found.empty() ? LibArch::kOther : elf_arch(fs_, found.front().host_path);
  for (const auto& prefix : prefixes) {
    if (have.count(prefix) != 0) continue;
    for (const auto& dir : dirs) {
      struct stat st {};
      auto file = find_file(dir, prefix + "." + version, st);
      if (!file || !S_ISREG(st.st_mode) || elf_arch(fs_, driver_path(*file)) != arch ||
          !vet_library(prefix, driver_path(*file)))
        continue;
      found.push_back(DriverLibrary{{*file, driver_path(*file)}, prefix, dir, std::nullopt});
      break;
    }
  }
}

std::vector<std::string> DriverRootFiles::names_in_config(const HostFile& config) {
  auto text = fs_.read_file(config.host_path, kMaxConfigFileBytes);
  if (!text) return {};
  std::vector<std::string> names;
  if (config.path.ends_with(".icd")) {
    const std::string first_line = text->substr(0, text->find('\n'));
    names.emplace_back(trim(first_line));
  } else if (config.path.ends_with(".json")) {
    if (auto json = parse_json_strict(*text)) names = json_library_paths(*json);
  }
  std::erase_if(names, [](const std::string& n) {
    return n.empty() || n.size() > 255 || n.find('\0') != std::string::npos;
  });
  return names;
}

std::optional<DriverLibrary> DriverRootFiles::named_library(const std::string& name, LibArch arch) {
  auto accept = [&](const std::string& in_root,
                    const std::string& loader_dir) -> std::optional<DriverLibrary> {
    if (!is_file_type(fs_, driver_path(in_root), S_IFREG) ||
        elf_arch(fs_, driver_path(in_root)) != arch || !vet_library(name, driver_path(in_root)))
      return std::nullopt;
    return DriverLibrary{{in_root, driver_path(in_root)}, name, loader_dir, std::nullopt};
  };
  if (name.find('/') != std::string::npos) {
    auto resolved =
        name.front() == '/' ? in_driver_root(name) : Result<std::string>(Error{"relative"});
    if (!resolved || !accepted_library_directory(dirname_of(*resolved))) return std::nullopt;
    return accept(*resolved, dirname_of(*resolved));
  }
  auto cache = ld_cache();
  if (cache && *cache != nullptr) {
    for (const auto& entry : **cache) {
      if (entry.arch != arch || entry.soname != name) continue;
      auto resolved = in_driver_root(std::string(entry.path));
      if (!resolved || !accepted_library_directory(dirname_of(*resolved))) continue;
      auto loader_dir = in_driver_root(dirname_of(std::string(entry.path)));
      return accept(*resolved, loader_dir && accepted_library_directory(*loader_dir)
                                   ? *loader_dir
                                   : dirname_of(*resolved));
    }
    return std::nullopt;
  }
  for (const std::string_view dir : library_dirs(arch)) {
    struct stat st {};
    if (auto found = find_file(std::string(dir), name, st)) {
      const auto in = resolved_dir(std::string(dir)).value_or("");
      if (auto lib = accept(*found, in.empty() ? dirname_of(*found) : in)) return lib;
    }
  }
  return std::nullopt;
}

Result<std::vector<DriverLibrary>> DriverRootFiles::libraries(const CapabilitySet& caps,
                                                              LibArch arch) {
  auto v = devices_.version();
  if (!v) return v.error();
  const auto prefixes = library_prefixes(caps);
  auto cache = ld_cache();
  if (!cache) return cache.error();
  auto libs = *cache != nullptr
                  ? libraries_from_cache(prefixes, arch, *v)
                  : Result<std::vector<DriverLibrary>>(libraries_from_dirs(prefixes, arch, *v));
  if (!libs) return libs;
  if (*cache != nullptr) add_beside_found(*libs, prefixes, *v);
  for (const auto& config : config_files(caps)) {
    for (const auto& name : names_in_config(config)) {
      if (auto lib = named_library(name, arch)) libs->push_back(std::move(*lib));
    }
  }
  std::set<std::string> seen;
  std::erase_if(*libs, [&](const DriverLibrary& l) { return !seen.insert(l.path).second; });
  std::sort(libs->begin(), libs->end(),
            [](const DriverLibrary& a, const DriverLibrary& b) { return a.path < b.path; });
  return libs;
}

std::optional<DriverRootFiles::Program> DriverRootFiles::find_program(
    const std::string& name, const std::vector<BinaryDirectory>& dirs) {
  std::optional<Program> script;
  for (const auto& d : dirs) {
    struct stat st {};
    auto found = find_file(d.dir, name, st);
    if (!found || !vet(driver_path(*found), S_IFREG) || (st.st_mode & 0111) == 0) continue;
    Program program{{d.container_dir + "/" + name, driver_path(*found)}, false};
    program.elf = is_elf(fs_, program.file.host_path);
    if (program.elf) return program;
    if (!script) script = std::move(program);
  }
  return script;
}

std::vector<HostFile> DriverRootFiles::binaries(const CapabilitySet& caps) {
  std::vector<HostFile> out;
  std::vector<BinaryDirectory> standard;
  for (auto dir : split(std::string_view(kStandardSearchPath), ':'))
    standard.push_back({std::string(dir), std::string(dir)});
  for (const auto& name : binary_names(caps)) {
    auto found = find_program(name, standard);
    // A wrapper script (Ubuntu's /usr/bin/nvidia-smi running /usr/local/nvidia/bin/nvidia-smi)
    // would fail in the container: the driver's own program beside its libraries replaces it,
    // and is taken where the standard path has none (a driver only in /usr/local/nvidia).
    if (!found || !found->elf) {
      auto beside = find_program(name, driver_binary_directories());
      if (beside && beside->elf) found = beside;
    }
    if (found) out.push_back(std::move(found->file));
  }
  return out;
}

std::vector<HostFile> DriverRootFiles::ipc_endpoints(const CapabilitySet& caps) {
  std::vector<HostFile> out;
  std::set<std::string> seen;
  for (const auto& ipc : ipc_paths(caps)) {
    auto file = driver_file(ipc.path, ipc.directory ? S_IFDIR : S_IFSOCK);
    if (file && seen.insert(file->host_path).second) out.push_back(std::move(*file));
  }
  return out;
}

std::vector<HostFile> DriverRootFiles::config_files(const CapabilitySet& caps) {
  std::vector<HostFile> out;
  for (const auto& config : gcr::config_files()) {
    if (!config.caps.overlaps(caps)) continue;
    for (const auto& dir : config_dirs()) {
      if (auto file = driver_file(dir + "/" + config.name, S_IFREG)) {
        out.push_back(std::move(*file));
        break;
      }
    }
  }
  return out;
}

std::vector<HostFile> DriverRootFiles::modules(const CapabilitySet& caps, LibArch arch) {
  std::vector<HostFile> out;
  std::set<std::string> seen;
  const auto bases = arch == LibArch::k64 ? std::span<const std::string_view>(kModuleBases64)
                                          : std::span<const std::string_view>(kModuleBases32);
  for (const auto& module_dir : module_dirs()) {
    if (!module_dir.caps.overlaps(caps)) continue;
    std::vector<std::string> dirs;
    if (module_dir.dir.front() == '/') {
      if (arch == LibArch::k64) dirs.push_back(module_dir.dir);
    } else {
      for (const auto base : bases) dirs.push_back(std::string(base) + "/" + module_dir.dir);
      for (const auto& base : configured_library_dirs()) {
        if (!is_library_directory(base)) dirs.push_back(base + "/" + module_dir.dir);
      }
    }
    for (const auto& dir : dirs) {
      const Listing& listed = listing(dir);
      for (const auto& name : listed.names) {
        struct stat st {};
        auto file = is_nvidia_module(name) ? find_file(dir, name, st) : std::nullopt;
        if (!file || !S_ISREG(st.st_mode) || elf_arch(fs_, driver_path(*file)) != arch) continue;
        const std::string path = listed.resolved + "/" + name;
        if (seen.insert(path).second && vet(driver_path(*file), S_IFREG))
          out.push_back(HostFile{path, driver_path(*file)});
      }
    }
  }
  return out;
}

std::optional<HostFile> DriverRootFiles::driver_file(const std::string& path, mode_t type) {
  auto resolved = in_driver_root(path);
  if (!resolved || !is_file_type(fs_, driver_path(*resolved), type)) return std::nullopt;
  if (!vet(driver_path(*resolved), type)) return std::nullopt;
  return HostFile{path, driver_path(*resolved)};
}

const std::set<std::string>& DriverRootFiles::configured_library_dirs() {
  if (configured_dirs_) return *configured_dirs_;
  configured_dirs_.emplace();
  auto conf = fs_.loader_conf(root_);
  if (!conf) {
    notes_.add("cannot read the driver root's loader configuration: " + conf.error().message);
    return *configured_dirs_;
  }
  for (const auto& dir : conf->directories) {
    auto resolved = in_driver_root(dir);
    if (resolved && !is_system_directory(*resolved)) configured_dirs_->insert(*resolved);
  }
  return *configured_dirs_;
}

bool DriverRootFiles::accepted_library_directory(const std::string& dir) {
  return is_library_directory(dir) || configured_library_dirs().count(dir) != 0;
}

std::vector<DriverRootFiles::BinaryDirectory> DriverRootFiles::driver_binary_directories() {
  std::vector<BinaryDirectory> dirs;
  for (const auto& lib_dir : configured_library_dirs()) {
    if (is_library_directory(lib_dir)) continue;
    const std::string bin = dirname_of(lib_dir) + "/bin";
    if (std::none_of(dirs.begin(), dirs.end(), [&](const auto& d) { return d.dir == bin; }))
      dirs.push_back({bin, "/usr/bin"});
  }
  return dirs;
}

Status DriverRootFiles::verdict(const std::string& host_path, mode_t type) {
  struct stat st {};
  Status verdict = trust_.file(host_path, st);
  if (verdict && (st.st_mode & S_IFMT) != type) verdict = Error{"not of the expected type"};
  if (verdict && S_ISREG(st.st_mode)) verdict = check_regular_source(fs_, host_path, st);
  return verdict;
}

bool DriverRootFiles::vet(const std::string& host_path, mode_t type) {
  auto v = verdict(host_path, type);
  if (!v) notes_.add("refused " + host_path + ": " + v.error().message);
  return v.ok();
}

bool DriverRootFiles::vet_library(const std::string& prefix, const std::string& host_path) {
  auto v = verdict(host_path, S_IFREG);
  if (!v) refuse_library(prefix, host_path + ": " + v.error().message);
  return v.ok();
}

void DriverRootFiles::refuse_library(const std::string& prefix, const std::string& why) {
  const std::string line = "refused " + why;
  notes_.add(line);
  refusals_[prefix] = line;
}

std::optional<std::string> DriverRootFiles::refusal(const std::string& prefix) const {
  const auto it = refusals_.find(prefix);
  return it == refusals_.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::vector<HostFile> DriverRootFiles::firmware() {
  std::vector<HostFile> out;
  auto v = devices_.version();
  if (!v) return out;
  auto dir = in_driver_root("/lib/firmware/nvidia/" + *v);
  if (!dir) return out;
  for (const auto& name : fs_.list(driver_path(*dir))) {
    const std::string path = *dir + "/" + name;
    if (name.rfind("gsp", 0) == 0 && name.size() > 4 && name.substr(name.size() - 4) == ".bin" &&
        is_file_type(fs_, driver_path(path), S_IFREG) && vet(driver_path(path), S_IFREG)) {
      out.push_back(HostFile{path, driver_path(path)});
    }
  }
  return out;
}

}  // namespace gcr
