#include "base/trust.h"

#include <sys/stat.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

// Not inlined: its buffer would sit in the frame of every level of TrustCheck::directory's
// recursion, a fresh stack page (a page fault) per level.
[[gnu::noinline]] std::string real_path(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : std::string();
}

// The last component of `path` in the directory `dir`.
std::string in_directory(const std::string& dir, const std::string& path) {
  return child_path(dir, basename_of(path));
}

// "/a/b/c" -> "/", "/a", "/a/b"
std::vector<std::string> ancestors(const std::string& path) {
  std::vector<std::string> out{"/"};
  for (std::size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1))
    out.push_back(path.substr(0, at));
  return out;
}

// A symlink someone other than root could replace: not root's, in a directory group or others
// may write (a sticky one such as /tmp, where only an entry's owner can replace it; any other
// such directory is refused by itself).
Status replaceable_link(const std::string& link, const struct stat& st, uid_t also_owner) {
  if (st.st_uid == 0 || st.st_uid == also_owner) return {};
  struct stat dir {};
  if (::stat(dirname_of(link).c_str(), &dir) == 0 && (dir.st_mode & (S_IWGRP | S_IWOTH)) == 0)
    return {};
  return Error{"a symlink not owned by root in a directory others can write (" + link + ")"};
}

}  // namespace

Status owned_by_root_only(const struct stat& st, uid_t also_owner) {
  if (st.st_uid != 0 && st.st_uid != also_owner) return Error{"not owned by root"};
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return Error{"writable by group or others"};
  return {};
}

Status TrustCheck::entry(const std::string& path, const struct stat& st) const {
  // A sticky directory is fine however writable: only an entry's owner can replace it there.
  if (S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX) != 0 &&
      (st.st_uid == 0 || st.st_uid == also_owner_))
    return {};
  if (auto s = owned_by_root_only(st, also_owner_); !s)
    return Error{s.error().message + " (" + path + ")"};
  return {};
}

// Every component of a symlink-free absolute path, each with lstat.
Status TrustCheck::real_chain(const std::string& real, bool last_is_directory) {
  for (const auto& dir : ancestors(real)) {
    if (auto s = directory(dir); !s) return s;
  }
  if (!last_is_directory) return {};
  struct stat st {};
  if (::lstat(real.c_str(), &st) != 0) return Error{errno_text(errno) + " (" + real + ")"};
  return entry(real, st);
}

Status TrustCheck::directory(const std::string& path) {
  if (const auto it = directories_.find(path); it != directories_.end()) return it->second;
  Status verdict;
  struct stat st {};
  // A symlink is judged where it leads; anything else by itself and its parent, so a deep
  // path costs one lstat per component instead of a realpath per component.
  if (::lstat(path.c_str(), &st) != 0) {
    verdict = Error{errno_text(errno) + " (" + path + ")"};
  } else if (S_ISLNK(st.st_mode) || (path != "/" && clean_path(path) != path)) {
    const std::string real = real_path(path);
    verdict = S_ISLNK(st.st_mode) ? replaceable_link(path, st, also_owner_) : Status{};
    if (verdict)
      verdict =
          real.empty() ? Error{errno_text(errno) + " (" + path + ")"} : real_chain(real, true);
    if (verdict) real_names_[path] = real;
  } else if (!S_ISDIR(st.st_mode)) {
    verdict = Error{"not a directory (" + path + ")"};
  } else if (path != "/") {
    verdict = directory(dirname_of(path));
    if (verdict) verdict = entry(path, st);
    if (verdict) real_names_[path] = in_directory(real_names_.at(dirname_of(path)), path);
  } else {
    verdict = entry(path, st);
    if (verdict) real_names_[path] = path;
  }
  directories_.emplace(path, verdict);
  return verdict;
}

Status TrustCheck::file(const std::string& path, struct stat& st) {
  if (path.empty() || path.front() != '/') return Error{"not an absolute path (" + path + ")"};
  const std::string cleaned = clean_path(path);
  // Where the name is looked up, then where it really is.
  for (const auto& dir : ancestors(cleaned)) {
    if (auto s = directory(dir); !s) return s;
  }
  // A name that is no symlink, in its directory's real name, is its real path.
  const std::string in_real = in_directory(real_names_.at(dirname_of(cleaned)), cleaned);
  if (::lstat(in_real.c_str(), &st) == 0) {
    if (!S_ISLNK(st.st_mode)) return entry(in_real, st);
    if (auto s = replaceable_link(in_real, st, also_owner_); !s) return s;
  }
  const std::string real = real_path(cleaned);
  if (real.empty()) return Error{errno_text(errno) + " (" + path + ")"};
  if (real != cleaned) {
    if (auto s = real_chain(real, false); !s) return s;
  }
  if (::lstat(real.c_str(), &st) != 0) return Error{errno_text(errno) + " (" + real + ")"};
  return entry(real, st);
}

Status TrustCheck::program(const std::string& path) {
  struct stat st {};
  if (auto s = file(path, st); !s) return s;
  if (!S_ISREG(st.st_mode)) return Error{"not a regular file (" + path + ")"};
  if ((st.st_mode & 0111) == 0) return Error{"not executable (" + path + ")"};
  return {};
}

Status TrustCheck::work_directory(const std::string& path) {
  if (path.empty() || path.front() != '/') return Error{"not an absolute path (" + path + ")"};
  std::string at = clean_path(path);
  struct stat st {};
  while (at != "/" && ::lstat(at.c_str(), &st) != 0 && errno == ENOENT) at = dirname_of(at);
  if (auto s = directory(at); !s) return s;
  const std::string& real = real_names_.at(at);
  if (::stat(real.c_str(), &st) != 0) return Error{errno_text(errno) + " (" + real + ")"};
  if (auto s = owned_by_root_only(st, also_owner_); !s)
    return Error{s.error().message + " (" + real + ")"};
  return {};
}

}  // namespace gcr
