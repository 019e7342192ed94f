#include "driver/root_path.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <deque>

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

void push_components(std::deque<std::string>& todo, std::string_view path) {
  const auto parts = split(path, '/');
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!it->empty() && *it != ".") todo.emplace_front(*it);
  }
}

std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? std::string() : path.substr(0, slash);
}

Result<std::string> read_link(const std::string& host_path) {
  std::string target(4096, '\0');
  const ssize_t n = ::readlink(host_path.c_str(), target.data(), target.size());
  if (n < 0) return Error{errno_text(errno)};
  target.resize(static_cast<std::size_t>(n));
  return target;
}

}  // namespace

Result<RootResolution> resolve_in_root_from(const std::string& root, RootResolution from,
                                            std::string_view path) {
  std::deque<std::string> todo;
  push_components(todo, path);
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
    push_components(todo, *target);
  }
  return from;
}

Result<std::string> resolve_in_root(const std::string& root, std::string_view path) {
  auto done = resolve_in_root_from(root, RootResolution{}, path);
  if (!done) return done.error();
  return done->resolved.empty() ? std::string("/") : done->resolved;
}

}  // namespace gcr
