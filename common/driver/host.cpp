#include "driver/host.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <set>
#include <span>
#include <string_view>
#include <utility>

#include "base/child_process.h"
#include "base/fs.h"
#include "base/text.h"
#include "driver/files.h"
#include "driver/root_path.h"
#include "hooks/driver_params.h"
#include "hooks/ld_so_conf.h"
#include "hooks/rootfs.h"
#include "json/strict_json.h"

namespace gcr {
namespace {

constexpr unsigned kNvidiaMajor = 195;
constexpr unsigned kCtlMinor = 255;
constexpr unsigned kModesetMinor = 254;
constexpr unsigned kDrmMajor = 226;
constexpr std::size_t kMaxProcFileBytes = 1 << 20;
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

// The names in a directory of the driver or dev root, sorted; none when it cannot be listed.
std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  auto dir = open_directory(path);
  auto entries = dir ? list_directory(std::move(*dir), path, SIZE_MAX)
                     : Result<std::vector<DirEntry>>(dir.error());
  if (!entries) return names;
  for (auto& e : *entries) names.push_back(std::move(e.name));
  return names;
}

// Whether a file starts with the ELF magic: a program, not a script.
bool is_elf(const std::string& host_path) {
  Fd fd(::open(host_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  char magic[4] = {};
  return fd.valid() && ::read(fd.get(), magic, sizeof magic) == 4 &&
         std::memcmp(magic,
                     "\x7f"
                     "ELF",
                     4) == 0;
}

// The ELF class and machine of a file: x86_64 -> k64, i386 -> k32.
LibArch elf_arch(const std::string& host_path) {
  Fd fd(::open(host_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  unsigned char header[20] = {};
  if (!fd.valid() ||
      ::read(fd.get(), header, sizeof header) != static_cast<ssize_t>(sizeof header) ||
      std::memcmp(header,
                  "\x7f"
                  "ELF",
                  4) != 0) {
    return LibArch::kOther;
  }
  const unsigned machine = header[18] | (header[19] << 8);
  if (header[4] == 2 && machine == 62) return LibArch::k64;
  if (header[4] == 1 && machine == 3) return LibArch::k32;
  return LibArch::kOther;
}

bool is_file_type(const std::string& host_path, mode_t type) {
  struct stat st {};
  return ::stat(host_path.c_str(), &st) == 0 && (st.st_mode & S_IFMT) == type;
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
Status check_regular_source(const std::string& path, const struct stat& st) {
  if (st.st_size > kMaxDriverFileBytes) return Error{"larger than 1 GiB"};
  struct statvfs fs {};
  if (st.st_nlink > 1 && !(::statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0))
    return Error{"a hard link (" + std::to_string(st.st_nlink) +
                 " names) on a writable filesystem"};
  return {};
}

// The driver root's ld.so.cache; nullopt when it has none.
Result<std::optional<std::vector<LdCacheEntry>>> load_ld_cache(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 && errno == ENOENT)
    return std::optional<std::vector<LdCacheEntry>>();
  auto data = read_regular_file(path, kMaxLdCacheBytes);
  if (!data)
    return Error{"cannot read the driver root's ld.so.cache: " + data.error().message + " (" +
                 path + ")"};
  auto entries = parse_ld_cache(*data);
  if (!entries)
    return Error{"cannot read the driver root's ld.so.cache: " + entries.error().message + " (" +
                 path + ")"};
  return std::optional<std::vector<LdCacheEntry>>(std::move(*entries));
}

}  // namespace

DriverHost::DriverHost(Config::Driver roots, NodeStatFn stat)
    : roots_(std::move(roots)), stat_(std::move(stat)), resolver_(roots_.root) {}

std::string DriverHost::dev_path(const std::string& in_root) const {
  return join_root(roots_.dev_root, in_root);
}
std::string DriverHost::driver_path(const std::string& in_root) const {
  return join_root(roots_.root, in_root);
}

Result<std::string> DriverHost::version() {
  if (!version_) {
    const std::string path = dev_path("/proc/driver/nvidia/version");
    auto text = read_regular_file(path, kMaxProcFileBytes);
    if (!text) {
      version_ = Error{"NVIDIA driver not found: " + text.error().message + " (" + path + ")"};
    } else if (auto v = parse_driver_version(*text); !v) {
      version_ = Error{"cannot read the driver version: " + v.error().message + " (" + path + ")"};
    } else {
      version_ = *v;
    }
  }
  return *version_;
}

bool DriverHost::modifies_device_files() {
  auto text = read_regular_file(dev_path(kDriverParamsPath), kMaxProcFileBytes);
  return text && without_device_node_modification(*text).has_value();
}

Result<std::vector<Gpu>> DriverHost::gpus() {
  if (gpus_) return *gpus_;
  const std::string dir = dev_path("/proc/driver/nvidia/gpus");
  std::vector<Gpu> found;
  for (const auto& entry : list_dir(dir)) {
    const std::string path = dir + "/" + entry + "/information";
    auto text = read_regular_file(path, kMaxProcFileBytes);
    if (!text) {
      gpus_ = Error{"cannot read GPU information: " + text.error().message + " (" + path + ")"};
      return *gpus_;
    }
    auto info = parse_gpu_information(*text);
    if (!info) {
      gpus_ = Error{"cannot read GPU information: " + info.error().message + " (" + path + ")"};
      return *gpus_;
    }
    found.push_back(Gpu{0, info->model, info->uuid, info->bus, info->minor});
  }
  std::sort(found.begin(), found.end(), [](const Gpu& a, const Gpu& b) { return a.bus < b.bus; });
  for (unsigned i = 0; i < found.size(); ++i) found[i].index = i;
  gpus_ = found;
  return *gpus_;
}

Result<std::map<std::string, unsigned>> DriverHost::char_majors() {
  if (!majors_) {
    const std::string path = dev_path("/proc/devices");
    auto text = read_regular_file(path, kMaxProcFileBytes);
    majors_ = text ? Result<std::map<std::string, unsigned>>(parse_char_majors(*text))
                   : Result<std::map<std::string, unsigned>>(
                         Error{text.error().message + " (" + path + ")"});
  }
  return *majors_;
}

Result<DeviceNode> DriverHost::checked_node(const std::string& name, unsigned expected_major) {
  const std::string container_path = "/dev/" + name;
  const std::string host_path = dev_path(container_path);
  auto st = stat_(host_path);
  if (!st) return Error{"missing device node: " + st.error().message};
  if (st->type != 'c') return Error{"not a character device (" + host_path + ")"};
  if (st->major != expected_major) {
    return Error{"device node has major " + std::to_string(st->major) + ", expected " +
                 std::to_string(expected_major) + " (" + host_path + ")"};
  }
  return node_from(container_path, *st);
}

DeviceNode DriverHost::node_from(const std::string& container_path, const NodeStat& st) const {
  DeviceNode node;
  node.path = container_path;
  node.host_path = dev_path(container_path);
  node.type = "c";
  node.major = st.major;
  node.minor = st.minor;
  node.file_mode = st.permissions & 0777;
  if (st.gid != 0) node.gid = st.gid;
  return node;
}

std::vector<DeviceNode> DriverHost::char_nodes(const std::string& dir, const std::string& pattern) {
  auto names = list_dir(dev_path(dir));
  std::vector<DeviceNode> nodes;
  for (const auto& name : names) {
    if (::fnmatch(pattern.c_str(), name.c_str(), 0) != 0) continue;
    const std::string container_path = dir + "/" + name;
    auto st = stat_(dev_path(container_path));
    if (st && st->type == 'c') nodes.push_back(node_from(container_path, *st));
  }
  return nodes;
}

Result<DeviceNode> DriverHost::gpu_node(const Gpu& gpu) {
  auto node = checked_node("nvidia" + std::to_string(gpu.minor), kNvidiaMajor);
  if (node && *node->minor != gpu.minor) {
    return Error{"device node minor " + std::to_string(*node->minor) +
                 " does not match GPU minor " + std::to_string(gpu.minor) + " (" + node->host_path +
                 ")"};
  }
  return node;
}

Result<std::vector<DeviceNode>> DriverHost::drm_nodes(const Gpu& gpu) {
  auto names = list_dir(dev_path("/sys/bus/pci/devices/" + gpu.bus.to_string() + "/drm"));
  std::vector<DeviceNode> nodes;
  for (const auto& name : names) {
    if (name.rfind("card", 0) != 0 && name.rfind("renderD", 0) != 0) continue;
    if (!stat_(dev_path("/dev/dri/" + name))) continue;
    auto node = checked_node("dri/" + name, kDrmMajor);
    if (!node) return node.error();
    nodes.push_back(std::move(*node));
  }
  return nodes;
}

Result<std::vector<DeviceNode>> DriverHost::control_nodes(const CapabilitySet& caps) {
  std::vector<DeviceNode> nodes;
  auto ctl = checked_node("nvidiactl", kNvidiaMajor);
  if (!ctl) return ctl.error();
  if (*ctl->minor != kCtlMinor)
    return Error{"nvidiactl has minor " + std::to_string(*ctl->minor) + ", expected 255"};
  nodes.push_back(*ctl);
  if (caps.has(Capability::kDisplay) && stat_(dev_path("/dev/nvidia-modeset"))) {
    auto modeset = checked_node("nvidia-modeset", kNvidiaMajor);
    if (!modeset) return modeset.error();
    if (*modeset->minor != kModesetMinor)
      return Error{"nvidia-modeset has minor " + std::to_string(*modeset->minor) +
                   ", expected 254"};
    nodes.push_back(*modeset);
  }
  if (!needs_compute_libraries(caps)) return nodes;
  auto majors = char_majors();
  const auto uvm =
      majors ? majors->find("nvidia-uvm") : std::map<std::string, unsigned>::const_iterator();
  if (!majors || uvm == majors->end()) {
    note(stat_(dev_path("/dev/nvidia-uvm"))
             ? "/dev/nvidia-uvm not given: nvidia-uvm is not listed in " +
                   dev_path("/proc/devices") + "; CUDA fails in the container"
             : "no " + dev_path("/dev/nvidia-uvm") +
                   " (the nvidia-uvm module is not loaded): CUDA fails in the container until it "
                   "is (nvidia-modprobe -u -c=0)");
    return nodes;
  }
  for (const char* name : {"nvidia-uvm", "nvidia-uvm-tools"}) {
    if (!stat_(dev_path(std::string("/dev/") + name))) continue;
    auto node = checked_node(name, uvm->second);
    if (!node) return node.error();
    nodes.push_back(*node);
  }
  return nodes;
}

Result<DeviceNode> DriverHost::node_of_module(const std::string& name, const std::string& module) {
  auto majors = char_majors();
  if (!majors) return majors.error();
  const auto major = majors->find(module);
  if (major == majors->end())
    return Error{"the " + module + " device is not listed in " + dev_path("/proc/devices")};
  return checked_node(name, major->second);
}

Result<DeviceNode> DriverHost::cap_node(unsigned minor) {
  return node_of_module("nvidia-caps/nvidia-cap" + std::to_string(minor), "nvidia-caps");
}

Result<DeviceNode> DriverHost::imex_channel_node(unsigned channel) {
  auto node = node_of_module("nvidia-caps-imex-channels/channel" + std::to_string(channel),
                             "nvidia-caps-imex-channels");
  if (node && *node->minor != channel) {
    return Error{"device node minor " + std::to_string(*node->minor) + " is not channel " +
                 std::to_string(channel) + " (" + node->host_path + ")"};
  }
  return node;
}

Result<MigMinors> DriverHost::mig_minors() {
  const std::string path = dev_path("/proc/driver/nvidia-caps/mig-minors");
  auto text = read_regular_file(path, kMaxProcFileBytes);
  if (!text)
    return Error{"cannot read MIG capability minors: " + text.error().message + " (" + path + ")"};
  auto minors = parse_mig_minors(*text);
  if (!minors)
    return Error{"cannot read MIG capability minors: " + minors.error().message + " (" + path +
                 ")"};
  return minors;
}

std::vector<MigInstance> DriverHost::mig_instances(const Gpu& gpu) {
  std::vector<MigInstance> out;
  const std::string dir =
      dev_path("/proc/driver/nvidia/capabilities/gpu" + std::to_string(gpu.minor) + "/mig");
  for (const auto& gi : list_dir(dir)) {
    const auto gi_id =
        gi.rfind("gi", 0) == 0 ? parse_decimal(std::string_view(gi).substr(2)) : std::nullopt;
    if (!gi_id) continue;
    for (const auto& ci : list_dir(dir + "/" + gi)) {
      const auto ci_id =
          ci.rfind("ci", 0) == 0 ? parse_decimal(std::string_view(ci).substr(2)) : std::nullopt;
      if (ci_id)
        out.push_back(MigInstance{static_cast<unsigned>(*gi_id), static_cast<unsigned>(*ci_id)});
    }
  }
  return out;
}

Result<std::vector<DeviceNode>> DriverHost::mig_access_nodes(const Gpu& gpu,
                                                             const MigInstance& instance) {
  const std::string gi =
      dev_path("/proc/driver/nvidia/capabilities/gpu" + std::to_string(gpu.minor) + "/mig/gi" +
               std::to_string(instance.gpu_instance));
  std::vector<DeviceNode> nodes;
  for (const std::string& file :
       {gi + "/access", gi + "/ci" + std::to_string(instance.compute_instance) + "/access"}) {
    auto text = read_regular_file(file, kMaxProcFileBytes);
    if (!text)
      return Error{"cannot read a MIG capability: " + text.error().message + " (" + file + ")"};
    auto minor = parse_cap_file_minor(*text);
    if (!minor)
      return Error{"cannot read a MIG capability: " + minor.error().message + " (" + file + ")"};
    auto node = cap_node(*minor);
    if (!node) return node.error();
    nodes.push_back(std::move(*node));
  }
  return nodes;
}

Result<const std::vector<LdCacheEntry>*> DriverHost::ld_cache() {
  if (!ld_cache_) ld_cache_ = load_ld_cache(driver_path("/etc/ld.so.cache"));
  if (!ld_cache_->ok()) return ld_cache_->error();
  const auto& entries = ld_cache_->value();
  return entries ? &*entries : nullptr;
}

Result<std::vector<DriverLibrary>> DriverHost::libraries_from_cache(
    const std::vector<std::string>& prefixes, LibArch arch, const std::string& version) {
  auto cache = ld_cache();
  if (!cache) return cache.error();
  std::map<std::string, DriverLibrary> chosen;  // prefix -> the last acceptable entry
  for (const auto& entry : **cache) {
    if (entry.arch != arch) continue;
    for (const auto& prefix : prefixes) {
      if (entry.soname.rfind(prefix, 0) != 0) continue;
      auto resolved = in_driver_root(entry.path);
      if (!resolved || basename_of(*resolved) != prefix + "." + version) continue;
      if (!accepted_library_directory(dirname_of(*resolved))) {
        refuse_library(prefix, driver_path(*resolved) +
                                   " from the driver root's ld.so.cache: not in a library "
                                   "directory (a standard one, or one the root's "
                                   "etc/ld.so.conf names outside the system directories)");
        continue;
      }
      if (!vet_library(prefix, driver_path(*resolved))) continue;
      auto loader_dir = in_driver_root(dirname_of(entry.path));
      chosen[prefix] = DriverLibrary{{*resolved, driver_path(*resolved)},
                                     prefix,
                                     loader_dir && accepted_library_directory(*loader_dir)
                                         ? *loader_dir
                                         : dirname_of(*resolved)};
    }
  }
  std::vector<DriverLibrary> out;
  for (auto& [prefix, lib] : chosen) out.push_back(std::move(lib));
  return out;
}

Result<std::string> DriverHost::in_driver_root(const std::string& path) {
  return resolver_.resolve(path);
}

const DriverHost::Listing& DriverHost::listing(const std::string& in_root_dir) {
  auto it = listings_.find(in_root_dir);
  if (it != listings_.end()) return it->second;
  Listing listing;
  if (auto dir = in_driver_root(in_root_dir)) {
    listing.resolved = *dir == "/" ? "" : *dir;
    for (auto& name : list_dir(driver_path(*dir))) listing.names.insert(std::move(name));
  }
  return listings_.emplace(in_root_dir, std::move(listing)).first->second;
}

std::optional<std::string> DriverHost::resolved_dir(const std::string& in_root_dir) {
  auto dir = in_driver_root(in_root_dir);
  if (!dir) return std::nullopt;
  return *dir == "/" ? std::string() : *dir;
}

std::optional<std::string> DriverHost::find_file(const std::string& in_root_dir,
                                                 const std::string& name, struct stat& st) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos)
    return std::nullopt;
  const auto dir = resolved_dir(in_root_dir);
  if (!dir) return std::nullopt;
  std::string path = *dir + "/" + name;
  if (::lstat(driver_path(path).c_str(), &st) != 0) return std::nullopt;
  if (!S_ISLNK(st.st_mode)) return path;
  auto resolved = in_driver_root(path);
  if (!resolved || ::stat(driver_path(*resolved).c_str(), &st) != 0) return std::nullopt;
  return *resolved;
}

std::vector<DriverLibrary> DriverHost::libraries_from_dirs(const std::vector<std::string>& prefixes,
                                                           LibArch arch,
                                                           const std::string& version) {
  std::vector<DriverLibrary> out;
  for (const auto& prefix : prefixes) {
    for (const std::string_view dir : library_dirs(arch)) {
      struct stat st {};
      auto found = find_file(std::string(dir), prefix + "." + version, st);
      if (!found || !vet_library(prefix, driver_path(*found))) continue;
      // /usr/lib and /lib hold either word size; the other directories hold one.
      if ((dir == "/usr/lib" || dir == "/lib") && elf_arch(driver_path(*found)) != arch) continue;
      const auto in = resolved_dir(std::string(dir)).value_or("");
      out.push_back(DriverLibrary{
          {*found, driver_path(*found)}, prefix, in.empty() ? dirname_of(*found) : in});
      break;
    }
  }
  return out;
}

void DriverHost::add_beside_found(std::vector<DriverLibrary>& found,
                                  const std::vector<std::string>& prefixes,
                                  const std::string& version) {
  std::set<std::string> dirs;
  std::set<std::string> have;
  for (const auto& lib : found) {
    dirs.insert(dirname_of(lib.path));
    have.insert(lib.prefix);
  }
  const LibArch arch = found.empty() ? LibArch::kOther : elf_arch(found.front().host_path);
  for (const auto& prefix : prefixes) {
    if (have.count(prefix) != 0) continue;
    for (const auto& dir : dirs) {
      struct stat st {};
      auto file = find_file(dir, prefix + "." + version, st);
      if (!file || !S_ISREG(st.st_mode) || elf_arch(driver_path(*file)) != arch ||
          !vet_library(prefix, driver_path(*file)))
        continue;
      found.push_back(DriverLibrary{{*file, driver_path(*file)}, prefix, dir});
      break;
    }
  }
}

std::vector<std::string> DriverHost::names_in_config(const HostFile& config) {
  auto text = read_regular_file(config.host_path, kMaxConfigFileBytes);
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

std::optional<DriverLibrary> DriverHost::named_library(const std::string& name, LibArch arch) {
  auto accept = [&](const std::string& in_root,
                    const std::string& loader_dir) -> std::optional<DriverLibrary> {
    if (!is_file_type(driver_path(in_root), S_IFREG) || elf_arch(driver_path(in_root)) != arch ||
        !vet_library(name, driver_path(in_root)))
      return std::nullopt;
    return DriverLibrary{{in_root, driver_path(in_root)}, name, loader_dir};
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
      auto resolved = in_driver_root(entry.path);
      if (!resolved || !accepted_library_directory(dirname_of(*resolved))) continue;
      auto loader_dir = in_driver_root(dirname_of(entry.path));
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

Result<std::vector<DriverLibrary>> DriverHost::libraries(const CapabilitySet& caps, LibArch arch) {
  auto v = version();
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

std::optional<DriverHost::Program> DriverHost::find_program(
    const std::string& name, const std::vector<BinaryDirectory>& dirs) {
  std::optional<Program> script;
  for (const auto& d : dirs) {
    struct stat st {};
    auto found = find_file(d.dir, name, st);
    if (!found || !vet(driver_path(*found), S_IFREG) || (st.st_mode & 0111) == 0) continue;
    Program program{{d.container_dir + "/" + name, driver_path(*found)}, false};
    program.elf = is_elf(program.file.host_path);
    if (program.elf) return program;
    if (!script) script = std::move(program);
  }
  return script;
}

std::vector<HostFile> DriverHost::binaries(const CapabilitySet& caps) {
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

std::vector<HostFile> DriverHost::ipc_endpoints(const CapabilitySet& caps) {
  std::vector<HostFile> out;
  std::set<std::string> seen;
  for (const auto& ipc : ipc_paths(caps)) {
    auto file = driver_file(ipc.path, ipc.directory ? S_IFDIR : S_IFSOCK);
    if (file && seen.insert(file->host_path).second) out.push_back(std::move(*file));
  }
  return out;
}

std::vector<HostFile> DriverHost::config_files(const CapabilitySet& caps) {
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

std::vector<HostFile> DriverHost::modules(const CapabilitySet& caps, LibArch arch) {
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
        if (!file || !S_ISREG(st.st_mode) || elf_arch(driver_path(*file)) != arch) continue;
        const std::string path = listed.resolved + "/" + name;
        if (seen.insert(path).second && vet(driver_path(*file), S_IFREG))
          out.push_back(HostFile{path, driver_path(*file)});
      }
    }
  }
  return out;
}

std::optional<HostFile> DriverHost::driver_file(const std::string& path, mode_t type) {
  auto resolved = in_driver_root(path);
  if (!resolved || !is_file_type(driver_path(*resolved), type)) return std::nullopt;
  if (!vet(driver_path(*resolved), type)) return std::nullopt;
  return HostFile{path, driver_path(*resolved)};
}

const std::set<std::string>& DriverHost::configured_library_dirs() {
  if (configured_dirs_) return *configured_dirs_;
  configured_dirs_.emplace();
  auto root = RootFs::open(roots_.root);
  // The host's own configuration, bounded all the same (but for time: it is not an image's).
  ImageBudget budget = ImageBudget::untimed();
  auto conf = root ? read_ld_so_conf(*root, budget) : Result<LdSoConf>(root.error());
  if (!conf) {
    note("cannot read the driver root's loader configuration: " + conf.error().message);
    return *configured_dirs_;
  }
  for (const auto& dir : conf->directories) {
    auto resolved = in_driver_root(dir);
    if (resolved && !is_system_directory(*resolved)) configured_dirs_->insert(*resolved);
  }
  return *configured_dirs_;
}

bool DriverHost::accepted_library_directory(const std::string& dir) {
  return is_library_directory(dir) || configured_library_dirs().count(dir) != 0;
}

std::vector<DriverHost::BinaryDirectory> DriverHost::driver_binary_directories() {
  std::vector<BinaryDirectory> dirs;
  for (const auto& lib_dir : configured_library_dirs()) {
    if (is_library_directory(lib_dir)) continue;
    const std::string bin = dirname_of(lib_dir) + "/bin";
    if (std::none_of(dirs.begin(), dirs.end(), [&](const auto& d) { return d.dir == bin; }))
      dirs.push_back({bin, "/usr/bin"});
  }
  return dirs;
}

Status DriverHost::verdict(const std::string& host_path, mode_t type) {
  struct stat st {};
  Status verdict = trust_.file(host_path, st);
  if (verdict && (st.st_mode & S_IFMT) != type) verdict = Error{"not of the expected type"};
  if (verdict && S_ISREG(st.st_mode)) verdict = check_regular_source(host_path, st);
  return verdict;
}

bool DriverHost::vet(const std::string& host_path, mode_t type) {
  auto v = verdict(host_path, type);
  if (!v) note("refused " + host_path + ": " + v.error().message);
  return v.ok();
}

bool DriverHost::vet_library(const std::string& prefix, const std::string& host_path) {
  auto v = verdict(host_path, S_IFREG);
  if (!v) refuse_library(prefix, host_path + ": " + v.error().message);
  return v.ok();
}

void DriverHost::refuse_library(const std::string& prefix, const std::string& why) {
  const std::string line = "refused " + why;
  note(line);
  refusals_[prefix] = line;
}

std::optional<std::string> DriverHost::refusal(const std::string& prefix) const {
  const auto it = refusals_.find(prefix);
  return it == refusals_.end() ? std::nullopt : std::optional<std::string>(it->second);
}

void DriverHost::note(std::string what) {
  if (std::find(notes_.begin(), notes_.end(), what) == notes_.end())
    notes_.push_back(std::move(what));
}

std::vector<std::string> DriverHost::take_notes() {
  return std::exchange(notes_, {});
}

std::vector<HostFile> DriverHost::firmware() {
  std::vector<HostFile> out;
  auto v = version();
  if (!v) return out;
  auto dir = in_driver_root("/lib/firmware/nvidia/" + *v);
  if (!dir) return out;
  for (const auto& name : list_dir(driver_path(*dir))) {
    const std::string path = *dir + "/" + name;
    if (name.rfind("gsp", 0) == 0 && name.size() > 4 && name.substr(name.size() - 4) == ".bin" &&
        is_file_type(driver_path(path), S_IFREG) && vet(driver_path(path), S_IFREG)) {
      out.push_back(HostFile{path, driver_path(path)});
    }
  }
  return out;
}

}  // namespace gcr
