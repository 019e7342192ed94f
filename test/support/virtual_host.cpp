#include "virtual_host.h"

#include <cerrno>

#include "base/fs.h"
#include "base/text.h"

namespace gcr::test {
namespace {

Error missing(const std::string& path) {
  return Error{errno_text(ENOENT) + " (" + path + ")"};
}

}  // namespace

void VirtualHost::directories_above(const std::string& path) {
  for (std::string dir = dirname_of(path); dir != "/"; dir = dirname_of(dir))
    entries_.try_emplace(dir, Entry{S_IFDIR | 0755, 0, 0, 0, ""});
}

void VirtualHost::add_file(const std::string& path, std::string content, mode_t mode, uid_t uid) {
  directories_above(path);
  entries_[path] = Entry{S_IFREG | mode, uid, 0, 0, std::move(content)};
}

void VirtualHost::add_char_device(const std::string& path, unsigned major, unsigned minor,
                                  mode_t mode) {
  directories_above(path);
  entries_[path] = Entry{S_IFCHR | mode, 0, major, minor, ""};
}

void VirtualHost::remove(const std::string& path) {
  entries_.erase(path);
}

const VirtualHost::Entry* VirtualHost::find(const std::string& path) const {
  const auto it = entries_.find(path);
  return it == entries_.end() ? nullptr : &it->second;
}

NodeStatFn VirtualHost::node_stat() const {
  return [this](const std::string& path) -> Result<NodeStat> {
    const Entry* entry = find(path);
    if (entry == nullptr) return missing(path);
    NodeStat st;
    st.type = S_ISCHR(entry->mode) ? 'c' : '\0';
    st.major = entry->major;
    st.minor = entry->minor;
    st.permissions = entry->mode & 07777;
    st.uid = entry->uid;
    return st;
  };
}

Result<std::string> VirtualHost::read_file(const std::string& path, std::size_t max_bytes) {
  const Entry* entry = find(path);
  if (entry == nullptr) return missing(path);
  if (!S_ISREG(entry->mode)) return Error{"not a regular file (" + path + ")"};
  if (entry->content.size() > max_bytes) return Error{"too large (" + path + ")"};
  return entry->content;
}

std::vector<std::string> VirtualHost::list(const std::string& dir) {
  std::vector<std::string> names;
  const std::string prefix = dir == "/" ? "/" : dir + "/";
  for (auto it = entries_.lower_bound(prefix); it != entries_.end(); ++it) {
    if (!it->first.starts_with(prefix)) break;
    const std::string name = it->first.substr(prefix.size());
    if (name.find('/') == std::string::npos) names.push_back(name);
  }
  return names;
}

bool VirtualHost::lstat(const std::string& path, struct stat& st) {
  const Entry* entry = find(path);
  if (entry == nullptr) {
    errno = ENOENT;
    return false;
  }
  st = {};
  st.st_mode = entry->mode;
  st.st_uid = entry->uid;
  st.st_nlink = 1;
  st.st_size = static_cast<off_t>(entry->content.size());
  return true;
}

bool VirtualHost::stat(const std::string& path, struct stat& st) {
  return lstat(path, st);
}

std::string VirtualHost::head(const std::string& path, std::size_t size) {
  const Entry* entry = find(path);
  return entry == nullptr ? std::string() : entry->content.substr(0, size);
}

bool VirtualHost::read_only_fs(const std::string&) {
  return false;
}

Result<std::string> VirtualHost::resolve_in_root(const std::string& root, const std::string& path) {
  std::string resolved;
  for (const auto part : split(path, '/')) {
    if (part.empty() || part == ".") continue;
    const std::string candidate =
        part == ".." ? dirname_of(resolved) : resolved + "/" + std::string(part);
    const std::string host = join_root(root, candidate);
    if (find(host) == nullptr) return missing(host);
    resolved = candidate == "/" ? "" : candidate;
  }
  return resolved.empty() ? std::string("/") : resolved;
}

Result<LoaderConf> VirtualHost::loader_conf(const std::string&) {
  return LoaderConf{};
}

Status VirtualHost::file(const std::string& path, struct stat& st) {
  if (!lstat(path, st)) return missing(path);
  if (auto s = owned_by_root_only(st); !s) return Error{s.error().message + " (" + path + ")"};
  return {};
}

Status VirtualHost::program(const std::string& path) {
  struct stat st {};
  if (auto s = file(path, st); !s) return s;
  if (!S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0)
    return Error{"not an executable file (" + path + ")"};
  return {};
}

std::string elf64_header() {
  std::string header(20, '\0');
  header.replace(0, 4,
                 "\x7f"
                 "ELF");
  header[4] = 2;    // ELFCLASS64
  header[5] = 1;    // little-endian
  header[18] = 62;  // EM_X86_64
  return header;
}

}  // namespace gcr::test
