#include "hooks/cuda_compat.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "base/fs.h"
#include "base/text.h"
#include "hooks/container_hooks.h"
#include "json/strict_json.h"
#include "ldcache/elf_library.h"
#include "ldcache/ldcache.h"

namespace gcr {
namespace {

constexpr std::string_view kLibcuda = "libcuda.so.";
constexpr std::string_view kNoteSection = ".note.cuda.fwd_compatibility";
constexpr std::string_view kNoteOwner = "NVIDIA Corporation";
constexpr std::string_view kDropInHeader =
    "# Written by gpu-container-runtime: CUDA forward-compatibility libraries, loaded first.\n";
constexpr std::size_t kMaxVersionParts = 4;

using Version = std::vector<std::uint64_t>;

// "535.261.03" -> {535, 261, 3}: at least `min_parts` decimal parts.
std::optional<Version> parse_version(std::string_view text, std::size_t min_parts) {
  Version out;
  for (auto part : split(text, '.')) {
    auto n = part.size() <= 9 ? parse_decimal(part) : std::nullopt;
    if (!n || out.size() == kMaxVersionParts) return std::nullopt;
    out.push_back(*n);
  }
  if (out.size() < min_parts) return std::nullopt;
  return out;
}

// <0, 0, >0 as `a` is older than, as old as, newer than `b` (missing parts count as 0).
int compare_versions(Version a, Version b) {
  const std::size_t n = std::max(a.size(), b.size());
  a.resize(n);
  b.resize(n);
  return a < b ? -1 : a > b ? 1 : 0;
}

std::string branches(const std::vector<std::uint64_t>& drivers) {
  std::string out;
  for (auto d : drivers) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return out;
}

CompatVerdict by_branches(const std::string& compat, const Version& compat_v,
                          const CudaCompatNote& note, const HostDriver& host,
                          const Version& host_v) {
  const std::string lib = std::string(kLibcuda) + compat;
  if (std::find(note.drivers.begin(), note.drivers.end(), host_v.front()) == note.drivers.end())
    return {false, lib + " runs on driver branches " + branches(note.drivers) +
                       ", not on the host's " + host.version};
  if (compare_versions(compat_v, host_v) <= 0)
    return {false, lib + " is not newer than the host's driver " + host.version};
  return {true, lib + " is newer than the host's driver " + host.version + " and runs on it"};
}

std::optional<CompatVerdict> by_cuda_version(const std::string& compat, const CudaCompatNote& note,
                                             const HostDriver& host) {
  if (note.cuda_version.empty() || !host.cuda) return std::nullopt;
  const auto mine = parse_version(note.cuda_version, 2);
  const auto theirs = parse_version(*host.cuda, 2);
  if (!mine || !theirs) return std::nullopt;
  const bool newer = compare_versions(*mine, *theirs) > 0;
  return CompatVerdict{
      newer, std::string(kLibcuda) + compat + " provides CUDA " + note.cuda_version +
                 (newer ? ", newer than" : ", not newer than") + " the host's " + *host.cuda};
}

// The one libcuda.so.<version> name in the listing (NVIDIA's libcuda.so.*.*), or why not.
Result<std::string> the_library(const std::vector<DirEntry>& entries, const std::string& dir) {
  std::vector<std::string> found;
  for (const auto& e : entries) {
    if (::fnmatch("libcuda.so.*.*", e.name.c_str(), FNM_PERIOD) == 0) found.push_back(e.name);
  }
  if (found.size() != 1)
    return Error{std::to_string(found.size()) + " libcuda.so.<version> files in " + dir +
                 ", not one"};
  return found.front();
}

// The library is one the loader would load as libcuda.so.1, and its note if it has one.
Result<std::optional<CudaCompatNote>> read_library(const RootFs& root, const std::string& path,
                                                   ImageBudget& budget) {
  auto fd = root.open_regular(path);
  if (!fd) return fd.error();
  if (!*fd) return Error{path + " leads nowhere"};
  auto lib = read_elf_library((*fd)->get(), budget, path);
  if (!lib) return budget.exceeded() ? lib.error() : lib.error().wrap(path);
  if (lib->soname != "libcuda.so.1" || (lib->flags & kLdFlagX8664Lib64) == 0)
    return Error{path + " is not a 64-bit libcuda.so.1"};
  auto note = read_elf_note((*fd)->get(), kNoteSection, kNoteOwner, budget, path);
  if (!note) return budget.exceeded() ? note.error() : note.error().wrap(path);
  if (!*note) return std::optional<CudaCompatNote>();
  auto parsed = parse_cuda_compat_note(**note);
  if (!parsed) return parsed.error().wrap(path + ": " + std::string(kNoteSection));
  return std::optional<CudaCompatNote>(std::move(*parsed));
}

// A folder a configuration line names as written: nothing ldconfig splits a line at or reads
// as a comment, no control character.
bool plain_folder(const std::string& folder) {
  return is_clean_absolute(folder) && std::none_of(folder.begin(), folder.end(), [](char c) {
           return static_cast<unsigned char>(c) <= ' ' || c == 0x7f || c == ',' || c == ':' ||
                  c == '=' || c == '#';
         });
}

std::string drop_in_text(const std::string& folder) {
  return std::string(kDropInHeader) + folder + "\n";
}

}  // namespace

Result<CudaCompatNote> parse_cuda_compat_note(std::string_view text) {
  auto doc = parse_json_strict(text);
  if (!doc) return doc.error();
  if (!doc->is_object()) return Error{"the note is not a JSON object"};
  CudaCompatNote note;
  if (const auto cuda = doc->find("CUDA Version"); cuda != doc->end()) {
    if (!cuda->is_string()) return Error{"`CUDA Version` is not a string"};
    note.cuda_version = cuda->get<std::string>();
  }
  if (const auto drivers = doc->find("Driver"); drivers != doc->end()) {
    if (!drivers->is_array()) return Error{"`Driver` is not a list"};
    for (const auto& d : *drivers) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
        return Error{"`Driver` holds something else than driver branches"};
      note.drivers.push_back(d.get<std::uint64_t>());
    }
  }
  return note;
}

CompatVerdict judge_cuda_compat(const std::string& compat,
                                const std::optional<CudaCompatNote>& note, const HostDriver& host) {
  const auto compat_v = parse_version(compat, 2);
  const auto host_v = parse_version(host.version, 2);
  if (!compat_v) return {false, quote(compat) + " is not a driver version"};
  if (!host_v) {
    // NVIDIA's specs give only the CUDA version where the driver's has a `*` (its CSV specs).
    if (note) {
      if (auto verdict = by_cuda_version(compat, *note, host)) return *verdict;
    }
    return {false, "the host's driver version " + quote(host.version) + " is unknown"};
  }
  if (note && !note->drivers.empty()) return by_branches(compat, *compat_v, *note, host, *host_v);
  if (note) {
    if (auto verdict = by_cuda_version(compat, *note, host)) return *verdict;
  }
  const bool newer = compat_v->front() > host_v->front();
  return {newer, std::string(kLibcuda) + compat + (newer ? " is" : " is not") +
                     " of a newer driver branch than the host's " + host.version};
}

Result<CudaCompat> find_cuda_compat(const RootFs& root, const std::string& dir,
                                    const HostDriver& host, ImageBudget& budget) {
  if (!is_clean_absolute(dir))
    return Error{"the CUDA compat folder " + quote(dir) + " is not an absolute path without `..`"};
  auto fd = root.open_if_exists(dir, O_RDONLY | O_DIRECTORY);
  if (!fd) return fd.error().wrap(dir);
  if (!*fd) return CudaCompat{std::nullopt, "the image has no " + dir};
  auto folder = root.canonical(dir);
  if (!folder) return folder.error();
  if (!plain_folder(*folder)) return Error{dir + " resolves to the unusual name " + quote(*folder)};
  auto entries = list_image_directory(std::move(**fd), *folder, budget);
  if (!entries) return entries.error();
  auto name = the_library(*entries, *folder);
  if (!name) return CudaCompat{std::nullopt, name.error().message};
  auto note = read_library(root, child_path(*folder, *name), budget);
  if (!note) return note.error();
  auto verdict = judge_cuda_compat(name->substr(kLibcuda.size()), *note, host);
  if (!verdict.first) return CudaCompat{std::nullopt, verdict.why};
  return CudaCompat{std::move(*folder), verdict.why};
}

Status write_cuda_compat_drop_in(const RootFs& root, const std::optional<std::string>& folder) {
  const std::string path = "/etc/ld.so.conf.d/" + std::string(kCudaCompatDropIn);
  if (!folder) {
    auto dir = root.open_if_exists("/etc/ld.so.conf.d", O_RDONLY | O_DIRECTORY);
    if (!dir) return dir.error();
    if (*dir && ::unlinkat((*dir)->get(), kCudaCompatDropIn, 0) != 0 && errno != ENOENT)
      return Error{"cannot remove " + path + ": " + errno_text(errno)};
    return {};
  }
  if (!plain_folder(*folder)) return Error{"the unusual folder name " + quote(*folder)};
  auto dir = root.make_dirs("/etc/ld.so.conf.d");
  if (!dir) return dir.error();
  if (auto s = write_file_atomic_at(dir->get(), kCudaCompatDropIn, drop_in_text(*folder),
                                    FileOwner{}, Durability::kNone);  // rewritten every start
      !s)
    return s.error().wrap("cannot write " + path);
  return {};
}

std::optional<std::string> cuda_compat_drop_in_folder(const RootFs& root) {
  struct stat st {};
  auto fd = root.open_regular("/etc/ld.so.conf.d/" + std::string(kCudaCompatDropIn), &st);
  if (!fd || !*fd) return std::nullopt;
  auto text = read_fd((*fd)->get(), kDropInHeader.size() + 4096, st);
  if (!text || text->rfind(kDropInHeader, 0) != 0 || text->back() != '\n') return std::nullopt;
  std::string folder = text->substr(kDropInHeader.size(), text->size() - kDropInHeader.size() - 1);
  if (!plain_folder(folder) || *text != drop_in_text(folder)) return std::nullopt;
  return folder;
}

std::vector<std::string> with_compat_first(const std::optional<std::string>& first,
                                           std::vector<std::string> folders) {
  if (!first) return folders;
  folders.erase(std::remove(folders.begin(), folders.end(), *first), folders.end());
  folders.insert(folders.begin(), *first);
  return folders;
}

}  // namespace gcr
