#include "discovery_cache/path_stamps.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "base/text.h"
#include "driver/root_path.h"

namespace gcr {
namespace {

constexpr int kMaxLinks = 40;  // as Linux allows one path

bool same_time(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

// `path`'s parts in `todo` (a stack: the first part last), ahead of what is there.
void push_parts(std::vector<std::string>& todo, const std::string& path) {
  const auto parts = split(path, '/');
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!it->empty() && *it != ".") todo.emplace_back(*it);
  }
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
  walks_.push_back({"/", path, follow, listed});
}

void ConsultedPaths::in_root(const std::string& root, const std::string& path) {
  walks_.push_back({"/", root, true, false});
  walks_.push_back({root, path, true, false});
}

std::vector<PathStamp> ConsultedPaths::stamps() const {
  std::map<std::string, PathStamp> by_path;
  SeenPaths seen;
  // Discovery asks about one path many times (a file found, vetted, then read): walk it once.
  std::vector<Walk> walks = walks_;
  const auto fields = [](const Walk& w) { return std::tie(w.root, w.path, w.follow, w.listed); };
  std::sort(walks.begin(), walks.end(),
            [&](const Walk& a, const Walk& b) { return fields(a) < fields(b); });
  walks.erase(std::unique(walks.begin(), walks.end(),
                          [&](const Walk& a, const Walk& b) { return fields(a) == fields(b); }),
              walks.end());
  for (const auto& w : walks) walk(w, seen, by_path);
  std::vector<PathStamp> stamps;
  stamps.reserve(by_path.size());
  for (auto& [path, stamp] : by_path) stamps.push_back(std::move(stamp));
  return stamps;
}

void ConsultedPaths::walk(const Walk& w, SeenPaths& seen,
                          std::map<std::string, PathStamp>& out) const {
  const auto look = [&seen](const std::string& path) -> Seen& {
    auto [at, fresh] = seen.try_emplace(path);
    if (fresh) at->second.exists = ::lstat(path.c_str(), &at->second.st) == 0;
    return at->second;
  };
  // Its names matter: a name in it was missing, a link, or it was listed.
  const auto whole = [&out](const std::string& dir) {
    if (auto at = out.find(dir); at != out.end()) at->second.whole = true;
  };
  std::string base = w.root;
  while (!base.empty() && base.back() == '/') base.pop_back();
  const std::string start = base.empty() ? "/" : base;
  if (const Seen& at = look(start); at.exists) {
    out.try_emplace(start, stamp_of(start, at.st));
  } else {
    return;
  }
  std::vector<std::string> todo;
  push_parts(todo, w.path);
  std::string current = start;
  int links_left = kMaxLinks;
  while (!todo.empty()) {
    const std::string part = std::move(todo.back());
    todo.pop_back();
    if (part == "..") {
      if (current.size() > start.size())
        current.resize(std::max<std::size_t>(current.rfind('/'), 1));
      continue;
    }
    std::string next = (current == "/" ? "" : current) + "/" + part;
    Seen& at = look(next);
    if (!at.exists || S_ISLNK(at.st.st_mode)) whole(current);
    if (!at.exists) return;
    if (S_ISLNK(at.st.st_mode)) {
      if (todo.empty() && !w.follow) return;
      if (!at.target) {
        auto target = read_link(next);
        if (!target) return;
        at.target = std::move(*target);
      }
      if (--links_left < 0) return;
      if (at.target->starts_with("/")) current = start;
      push_parts(todo, *at.target);
      continue;
    }
    out.try_emplace(next, stamp_of(next, at.st));
    current = std::move(next);
  }
  if (w.listed) whole(current);
}

}  // namespace gcr
