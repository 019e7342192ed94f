#include "driver/root_path.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <deque>

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : path.substr(0, slash);
}

// What /proc/self/fd says `fd` names; "" when it cannot be read.
std::string fd_name(int fd) {
  auto name = read_link("/proc/self/fd/" + std::to_string(fd));
  return name ? *name : "";
}

}  // namespace

void push_path_parts(std::deque<std::string>& todo, std::string_view path) {
  const auto parts = split(path, '/');
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!it->empty() && *it != ".") todo.emplace_front(*it);
  }
}

Result<std::string> read_link(const std::string& host_path) {
  std::string target(4096, '\0');
  const ssize_t n = ::readlink(host_path.c_str(), target.data(), target.size());
  if (n < 0) return Error{errno_text(errno)};
  if (static_cast<std::size_t>(n) == target.size()) return Error{errno_text(ENAMETOOLONG)};
  target.resize(static_cast<std::size_t>(n));
  return target;
}

Result<RootResolution> resolve_in_root_from(const std::string& root, RootResolution from,
                                            std::string_view path) {
  std::deque<std::string> todo;
  push_path_parts(todo, path);
  std::string& resolved = from.resolved;
  while (!todo.empty()) {
    const std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == "..") {
      resolved = parent_of(resolved);
      continue;
    }
    const std::string candidate = resolved + "/" + part;
    const std::string host = join_root(root, candidate);
    struct stat st {};
    if (::lstat(host.c_str(), &st) != 0) return Error{errno_text(errno) + " (" + host + ")"};
    if (!S_ISLNK(st.st_mode)) {
      resolved = candidate;
      continue;
    }
    if (--from.links_left < 0) return Error{"too many levels of symbolic links (" + host + ")"};
    auto target = read_link(host);
    if (!target) return Error{target.error().message + " (" + host + ")"};
    if (!target->empty() && target->front() == '/') resolved.clear();
    push_path_parts(todo, *target);
  }
  return from;
}

Result<std::string> resolve_in_root(const std::string& root, std::string_view path) {
  auto done = resolve_in_root_from(root, RootResolution{}, path);
  if (!done) return done.error();
  return done->resolved.empty() ? std::string("/") : done->resolved;
}

Result<std::string> RootResolver::resolve(const std::string& path) {
  if (const auto known = answers_.find(path); known != answers_.end()) return known->second;
  Result<std::string> answer = Error{""};
  if (auto fast = by_kernel(path)) {
    answer = std::move(*fast);
  } else {
    answer = by_parts(path);
  }
  if (answers_.size() < kMaxRemembered) answers_.emplace(path, answer);
  return answer;
}

std::optional<std::string> RootResolver::by_kernel(const std::string& path) {
  if (!root_fd_) {
    root_fd_.emplace(::open(root_.empty() ? "/" : root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (root_fd_->valid()) real_root_ = fd_name(root_fd_->get());
    if (real_root_ == "/") real_root_.clear();
  }
  if (!root_fd_->valid() || path.empty() || path.front() != '/') return std::nullopt;
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  const auto first = path.find_first_not_of('/');
  const std::string relative = first == std::string::npos ? "." : path.substr(first);
  const Fd fd(static_cast<int>(
      ::syscall(SYS_openat2, root_fd_->get(), relative.c_str(), &how, sizeof how)));
  if (!fd.valid()) return std::nullopt;
  const std::string name = fd_name(fd.get());
  // The name must lie in the root as /proc/self/fd names it (a root reached through a bind
  // mount can be named otherwise: then the parts are walked).
  if (name.rfind(real_root_, 0) != 0) return std::nullopt;
  const std::string in_root = name.substr(real_root_.size());
  if (in_root.empty()) return std::string("/");
  if (in_root.front() != '/') return std::nullopt;
  return in_root;
}

Result<std::string> RootResolver::by_parts(const std::string& path) {
  Result<RootResolution> at = RootResolution{};
  std::string written;
  for (const auto part : split(path, '/')) {
    if (part.empty() || part == ".") continue;
    written += "/" + std::string(part);
    if (const auto known = parts_.find(written); known != parts_.end()) {
      at = known->second;
    } else {
      at = resolve_in_root_from(root_, *at, part);
      if (parts_.size() < kMaxRemembered) parts_.emplace(written, at);
    }
    if (!at) return at.error();
  }
  return at->resolved.empty() ? std::string("/") : at->resolved;
}

}  // namespace gcr
