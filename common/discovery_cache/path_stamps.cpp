#include "discovery_cache/path_stamps.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "driver/root_path.h"

namespace gcr {
namespace {

bool same_time(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

}  // namespace

bool PathStamp::holds(const PathStamp& now) const {
  if (path != now.path || dev != now.dev || ino != now.ino || mode != now.mode || uid != now.uid ||
      gid != now.gid)
    return false;
  return !whole || (nlink == now.nlink && size == now.size && same_time(mtime, now.mtime) &&
                    same_time(ctime, now.ctime));
}

PathStamp stamp_of(const std::string& path, const struct stat& st) {
  return PathStamp{path,        st.st_dev,  st.st_ino,  st.st_mode, st.st_uid,           st.st_gid,
                   st.st_nlink, st.st_size, st.st_mtim, st.st_ctim, !S_ISDIR(st.st_mode)};
}

std::optional<std::string> changed_path(const std::vector<PathStamp>& stamps) {
  for (const auto& stamp : stamps) {
    struct stat st {};
    if (::lstat(stamp.path.c_str(), &st) != 0 || !stamp.holds(stamp_of(stamp.path, st)))
      return stamp.path;
  }
  return std::nullopt;
}

void ConsultedPaths::host(const std::string& path, bool follow, bool listed) {
  walk("/", path, follow, listed);
}

void ConsultedPaths::in_root(const std::string& root, const std::string& path, bool listed) {
  walk("/", root, true, false);
  walk(root, path, true, listed);
}

std::vector<PathStamp> ConsultedPaths::stamps() const {
  std::vector<PathStamp> stamps;
  stamps.reserve(stamps_.size());
  for (const auto& [path, stamp] : stamps_) stamps.push_back(stamp);
  return stamps;
}

ConsultedPaths::Seen& ConsultedPaths::look(const std::string& path) {
  auto [at, fresh] = seen_.try_emplace(path);
  if (fresh) at->second.exists = ::lstat(path.c_str(), &at->second.st) == 0;
  return at->second;
}

void ConsultedPaths::whole(const std::string& dir) {
  if (auto at = stamps_.find(dir); at != stamps_.end()) at->second.whole = true;
}

void ConsultedPaths::walk(const std::string& root, const std::string& path, bool follow,
                          bool listed) {
  // Discovery asks about one path many times (found, vetted, then read): walked once.
  if (!walked_.emplace(root, path, follow, listed).second) return;
  std::string start = root;
  while (start.size() > 1 && start.back() == '/') start.pop_back();
  if (const Seen& at = look(start); at.exists) {
    stamps_.try_emplace(start, stamp_of(start, at.st));
  } else {
    return;
  }
  std::deque<std::string> todo;
  push_path_parts(todo, path);
  std::string current = start;
  int links_left = kMaxSymlinks;
  while (!todo.empty()) {
    const std::string part = std::move(todo.front());
    todo.pop_front();
    if (part == "..") {
      if (current.size() > start.size())
        current.resize(std::max<std::size_t>(current.rfind('/'), 1));
      continue;
    }
    std::string next = (current == "/" ? "" : current) + "/" + part;
    Seen& at = look(next);
    if (!at.exists) {
      whole(current);
      return;
    }
    if (S_ISLNK(at.st.st_mode)) {
      whole(current);
      // In a sticky directory a link's owner decides whether it is trusted.
      if ((seen_[current].st.st_mode & S_ISVTX) != 0)
        stamps_.try_emplace(next, stamp_of(next, at.st));
      if (todo.empty() && !follow) return;
      if (!at.target) {
        auto target = read_link(next);
        if (!target) return;
        at.target = std::move(*target);
      }
      if (--links_left < 0) return;
      if (at.target->starts_with("/")) current = start;
      push_path_parts(todo, *at.target);
      continue;
    }
    stamps_.try_emplace(next, stamp_of(next, at.st));
    current = std::move(next);
  }
  if (listed) whole(current);
}

}  // namespace gcr
