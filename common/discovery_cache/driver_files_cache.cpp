#include "discovery_cache/driver_files_cache.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <ctime>

#include "discovery_cache/fields.h"
#include "discovery_cache/recording_host.h"
#include "discovery_cache/stamped_file.h"
#include "driver/host_fs.h"
#include "ldcache/elf_library.h"

namespace gcr {
namespace {

void write_files(FieldWriter& w, const std::vector<HostFile>& files) {
  w.number(files.size());
  for (const auto& f : files) {
    w.text(f.path);
    w.text(f.host_path);
  }
}

void write_elf(FieldWriter& w, const std::optional<ElfLibrary>& elf) {
  w.number(!elf ? 0 : elf->soname ? 2 : 1);
  if (!elf) return;
  if (elf->soname) w.text(*elf->soname);
  w.signed_number(elf->flags);
}

bool read_elf(FieldReader& r, std::optional<ElfLibrary>& elf) {
  std::uint64_t form = 0;
  if (!r.number(form) || form > 2) return false;
  if (form == 0) return true;
  ElfLibrary lib;
  // Read back as read from the library: a name a soname link can have.
  if (form == 2 && (!r.text(lib.soname.emplace()) || !is_soname_file_name(*lib.soname)))
    return false;
  std::int64_t flags = 0;
  if (!r.signed_number(flags) || flags < INT32_MIN || flags > INT32_MAX) return false;
  lib.flags = static_cast<std::int32_t>(flags);
  elf = std::move(lib);
  return true;
}

// Each library's soname and flags, read as they are kept: the file's stamp, taken before,
// is checked after, so a library changed meanwhile is not kept. One that cannot be read is
// kept without them (the loader-cache step reads it, and says why it cannot).
void read_library_facts(std::vector<DriverLibrary>& libraries) {
  for (auto& lib : libraries) {
    const Fd found(::open(lib.host_path.c_str(), O_PATH | O_CLOEXEC));
    if (!found.valid()) continue;
    auto fd = reopen_regular(found, lib.host_path);
    if (!fd) continue;
    ImageBudget budget;
    if (auto elf = read_elf_library(fd->get(), budget, lib.host_path)) lib.elf = std::move(*elf);
  }
}

bool read_files(FieldReader& r, std::vector<HostFile>& files) {
  std::size_t n = 0;
  if (!r.count(n)) return false;
  for (std::size_t i = 0; i < n; ++i) {
    HostFile f;
    if (!r.text(f.path) || !r.text(f.host_path)) return false;
    files.push_back(std::move(f));
  }
  return true;
}

// What changes when this program does (a package upgrade, a rebuild): what it found is not
// what another build would find.
std::string program_identity() {
  struct stat st {};
  if (::stat("/proc/self/exe", &st) != 0) return "";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" +
         std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec) + ":" + std::to_string(st.st_ctim.tv_sec) + "." +
         std::to_string(st.st_ctim.tv_nsec);
}

// Found again through a recorder, and kept when it may be.
Result<DriverFileSet> find_and_keep(const CapabilitySet& caps, DriverHost& host,
                                    const std::string& dir, const std::string& key) {
  // Where nothing can be kept (a shim that is not root, a read-only /run), nothing is stamped.
  if (auto ready = store_directory(dir); !ready) {
    host.notes().add_debug("driver files not kept in the discovery cache: " +
                           ready.error().message);
    return host.files().file_set(caps);
  }
  const timespec started = realtime_now();
  // A host of its own: nothing remembered from before the stamps were taken.
  SystemFs fs;
  TrustCheck trust;
  RecordingHost recorder(fs, trust);
  const auto earlier = host.notes().take();
  DriverRootFiles files(host.files().root(), host.devices(), recorder, recorder, host.notes());
  auto set = files.file_set(caps);
  const auto notes = host.notes().take();
  for (const auto& line : earlier) host.notes().add(line);
  for (const auto& line : notes) host.notes().add(line);
  if (!set) return set;
  read_library_facts(set->libraries);
  if (!recorder.complete()) {
    host.notes().add_debug("driver files not kept in the discovery cache: a look-up failed");
    return set;
  }
  const Stamped stamped{recorder.consulted().stamps(), recorder.read_only_answers(),
                        encode_file_set(*set, notes)};
  // Each path was stamped before discovery read it: one that changed since may have changed
  // under it.
  if (auto changed = changed_path(stamped.stamps)) {
    host.notes().add_debug(
        "driver files not kept in the discovery cache: changed during discovery (" + *changed +
        ")");
    return set;
  }
  if (auto kept = store_stamped(dir, key, stamped, started); kept) {
    host.notes().add_debug("driver files kept in the discovery cache with " +
                           std::to_string(stamped.stamps.size()) + " paths' stamps (" + dir + ")");
  } else {
    host.notes().add_debug("driver files not kept in the discovery cache: " + kept.error().message);
  }
  return set;
}

}  // namespace

std::string encode_file_set(const DriverFileSet& set, const std::vector<std::string>& notes) {
  FieldWriter w;
  w.number(set.libraries.size());
  for (const auto& lib : set.libraries) {
    w.text(lib.path);
    w.text(lib.host_path);
    w.text(lib.prefix);
    w.text(lib.loader_dir);
    write_elf(w, lib.elf);
  }
  for (const auto* files : {&set.binaries, &set.firmware, &set.config_files, &set.modules})
    write_files(w, *files);
  w.number(notes.size());
  for (const auto& line : notes) w.text(line);
  return w.take();
}

std::optional<DecodedFileSet> decode_file_set(const std::string& payload) {
  FieldReader r(payload);
  DecodedFileSet decoded;
  std::size_t n = 0;
  if (!r.count(n)) return std::nullopt;
  for (std::size_t i = 0; i < n; ++i) {
    DriverLibrary lib;
    if (!r.text(lib.path) || !r.text(lib.host_path) || !r.text(lib.prefix) ||
        !r.text(lib.loader_dir) || !read_elf(r, lib.elf))
      return std::nullopt;
    decoded.set.libraries.push_back(std::move(lib));
  }
  auto& set = decoded.set;
  for (auto* files : {&set.binaries, &set.firmware, &set.config_files, &set.modules}) {
    if (!read_files(r, *files)) return std::nullopt;
  }
  if (!r.count(n)) return std::nullopt;
  for (std::size_t i = 0; i < n; ++i) {
    std::string line;
    if (!r.text(line)) return std::nullopt;
    decoded.notes.push_back(std::move(line));
  }
  if (!r.at_end()) return std::nullopt;
  return decoded;
}

Result<DriverFileSet> cached_file_set(const CapabilitySet& caps, DriverHost& host,
                                      const std::string& state_dir) {
  const std::string program = program_identity();
  if (!host.on_system() || state_dir.empty() || program.empty()) return host.files().file_set(caps);
  auto version = host.devices().version();
  if (!version) return version.error();
  const std::string dir = state_dir + "/discovery";
  const std::string key = "root " + host.files().root() + "\nversion " + *version +
                          "\ncapabilities " + caps.to_string() + "\nprogram " + program + "\n";
  auto payload = load_stamped(dir, key);
  auto decoded = payload ? decode_file_set(*payload) : std::nullopt;
  if (decoded) {
    for (auto& line : decoded->notes) host.notes().add(std::move(line));
    host.notes().add_debug("driver files from the discovery cache (" + dir + ")");
    return std::move(decoded->set);
  }
  host.notes().add_debug("discovery cache not used: " +
                         (payload ? "unreadable (" + dir + ")" : payload.error().message));
  return find_and_keep(caps, host, dir, key);
}

}  // namespace gcr
