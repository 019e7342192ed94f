#include "hooks/musl_path.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <set>

#include "base/fs.h"
#include "base/text.h"
#include "ldcache/image_budget.h"

namespace gcr {
namespace {

// musl's names of this machine's loader and of the 32-bit one it can also run.
struct MuslArch {
  const char* native;
  const char* compat32;
};
#if defined(__x86_64__)
constexpr MuslArch kArch{"x86_64", "i386"};
#elif defined(__aarch64__)
constexpr MuslArch kArch{"aarch64", "armhf"};
#else
constexpr MuslArch kArch{nullptr, nullptr};
#endif

// What musl searches without a .path file, which the file replaces: written out with it.
const std::vector<std::string>& default_search_path() {
  static const std::vector<std::string> dirs{"/lib", "/usr/local/lib", "/usr/lib"};
  return dirs;
}

// More than any search path: a larger file is the image's doing, refused.
constexpr std::size_t kMaxPathFileBytes = 64 * 1024;

std::string loader_of(const char* arch) {
  return std::string("/lib/ld-musl-") + arch + ".so.1";
}

std::string path_file_of(const char* arch) {
  return std::string("ld-musl-") + arch + ".path";
}

// Whether the in-root `path` is there and no directory, links followed inside the root.
Result<bool> is_file(const RootFs& root, const std::string& path) {
  auto found = root.open_if_exists(path, O_PATH);
  if (!found) return found.error();
  if (!*found) return false;
  struct stat st {};
  if (::fstat((*found)->get(), &st) != 0) return Error{"cannot stat " + path};
  return !S_ISDIR(st.st_mode);
}

struct Classes {
  bool bits64 = false;
  bool bits32 = false;
};

// The ELF class of the regular file `name` in `dir`: 1 (32-bit), 2 (64-bit) or 0 (no ELF file,
// or not one to open). A library mounted there is read through the mount.
int elf_class_of(int dir, const std::string& name) {
  Fd found(::openat(dir, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  if (!found.valid()) return 0;
  auto file = reopen_regular(found, name);
  if (!file) return 0;
  std::array<unsigned char, 5> ident{};
  if (::pread(file->get(), ident.data(), ident.size(), 0) != static_cast<ssize_t>(ident.size()))
    return 0;
  if (ident[0] != 0x7f || ident[1] != 'E' || ident[2] != 'L' || ident[3] != 'F') return 0;
  return ident[4] == 1 || ident[4] == 2 ? ident[4] : 0;
}

// The libraries of a folder read for their class: enough to tell a folder of one class, as
// the driver's folders are.
constexpr int kMaxLibrariesRead = 64;

// The in-root directory `folder` opened for listing: inside the rootfs' own mount, or one that
// is itself a mount (a volume, a directory bound in by a spec); nothing when it is neither.
Result<std::optional<Fd>> open_folder(const RootFs& root, const std::string& folder) {
  auto dir = root.open_directory(folder, nullptr);
  if (dir) return dir;
  return root.open_across_mounts(folder, O_RDONLY | O_DIRECTORY);
}

// The ELF classes of the libraries (lib?*.so*, no links) in the in-root `folder`, the first
// kMaxLibrariesRead of them.
Result<Classes> library_classes(const RootFs& root, const std::string& folder,
                                ImageBudget& budget) {
  Classes classes;
  auto dir = open_folder(root, folder);
  if (!dir) return dir.error();
  if (!*dir) return classes;
  Fd listed(::fcntl((*dir)->get(), F_DUPFD_CLOEXEC, 0));
  if (!listed.valid()) return Error{"cannot list " + folder + ": " + errno_text(errno)};
  auto entries = list_image_directory(std::move(listed), folder, budget);
  if (!entries) return entries.error();
  int read = 0;
  for (const auto& e : *entries) {
    if (e.symlink || ::fnmatch("lib?*.so*", e.name.c_str(), 0) != 0) continue;
    if (++read > kMaxLibrariesRead) break;
    const int elf_class = elf_class_of((*dir)->get(), e.name);
    classes.bits32 = classes.bits32 || elf_class == 1;
    classes.bits64 = classes.bits64 || elf_class == 2;
    if (classes.bits32 && classes.bits64) break;
  }
  return classes;
}

// The directories the .path file `name` in /etc lists (the default search path when there is
// none), and whether there is one.
Result<std::pair<std::vector<std::string>, bool>> listed_dirs(const RootFs& root,
                                                              const std::string& name) {
  const std::string path = "/etc/" + name;
  struct stat st {};
  auto file = root.open_regular(path, &st);
  if (!file) return file.error();
  if (!*file) return std::pair{default_search_path(), false};
  if (static_cast<std::size_t>(st.st_size) > kMaxPathFileBytes)
    return Error{path + " holds more than " + std::to_string(kMaxPathFileBytes) + " bytes"};
  auto text = read_fd((*file)->get(), kMaxPathFileBytes);
  if (!text) return text.error().wrap("cannot read " + path);
  std::vector<std::string> dirs;
  std::string dir;
  for (const char c : *text + "\n") {
    if (c != ':' && c != '\n') {
      dir += c;
    } else if (!dir.empty()) {
      dirs.push_back(std::move(dir));
      dir.clear();
    }
  }
  return std::pair{std::move(dirs), true};
}

// The .path file `name` with the `folders` it does not list before what it lists.
Status add_to_path_file(const RootFs& root, const std::string& name,
                        const std::vector<std::string>& folders) {
  if (folders.empty()) return {};
  auto listed = listed_dirs(root, name);
  if (!listed) return listed.error();
  const auto& [dirs, exists] = *listed;
  std::set<std::string> known(dirs.begin(), dirs.end());
  std::string content;
  bool added = false;
  for (const auto& folder : folders) {
    if (!known.insert(folder).second) continue;
    content += folder + "\n";
    added = true;
  }
  if (!added && exists) return {};
  for (const auto& dir : dirs) content += dir + "\n";
  auto etc = root.make_dirs("/etc");
  if (!etc) return etc.error();
  if (auto s = write_file_atomic_at(etc->get(), name, content, FileOwner{},
                                    Durability::kNone);  // rewritten before every start
      !s)
    return s.error().wrap("cannot write /etc/" + name);
  return {};
}

// What cannot be looked at (a mount, a loop of links) counts as missing.
bool is_musl_image(const RootFs& root) {
  const auto loader = is_file(root, loader_of(kArch.native));
  if (loader && *loader) return true;
  const auto alpine = is_file(root, "/etc/alpine-release");
  return alpine && *alpine;
}

}  // namespace

Status add_folders_to_musl_path(const RootFs& root, const std::vector<std::string>& folders) {
  if (kArch.native == nullptr || folders.empty()) return {};
  if (!is_musl_image(root)) return {};
  ImageBudget budget;
  std::vector<std::string> native;
  std::vector<std::string> compat32;
  for (const auto& folder : folders) {
    // A folder that cannot be read (another mount, over a budget) counts as native.
    const auto read = library_classes(root, folder, budget);
    const Classes classes = read ? *read : Classes{};
    if (classes.bits64 || !classes.bits32) native.push_back(folder);
    if (classes.bits32) compat32.push_back(folder);
  }
  if (auto s = add_to_path_file(root, path_file_of(kArch.native), native); !s) return s;
  if (compat32.empty()) return {};
  const auto loader32 = is_file(root, loader_of(kArch.compat32));
  if (!loader32 || !*loader32) return {};
  return add_to_path_file(root, path_file_of(kArch.compat32), compat32);
}

bool lists_musl_loader(const RootFs& root, ResolvedDirs& known, ImageBudget& budget) {
  if (kArch.native == nullptr) return false;
  const auto lib = root.canonical("/lib", known);
  if (!lib) return false;
  const auto listing = root.listing_in(*lib, known, budget);
  const std::string name = basename_of(loader_of(kArch.native));
  return listing && *listing != nullptr && find_entry(**listing, name) != nullptr;
}

}  // namespace gcr
