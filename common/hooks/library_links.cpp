#include "hooks/library_links.h"

#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <set>

#include "base/text.h"
#include "hooks/ldcache_in_process.h"

namespace gcr {
namespace {

// Linux's own limit on the links one lookup follows (MAXSYMLINKS): past it the lookup fails
// with ELOOP, and ldconfig passes the entry by.
constexpr int kMaxHops = 40;
// More directories than library links of any image lead into: past it the caller leaves the
// work to ldconfig rather than hold that many open.
constexpr std::size_t kMaxDirectories = 256;

class LinkWalker {
 public:
  LinkWalker(const RootFs& root, ImageBudget& budget, ResolvedDirs& known)
      : root_(root), budget_(budget), known_(known) {}

  Status walk_directory(const std::string& dir) {
    const auto [at, fresh] = listings_.try_emplace(dir, nullptr);
    if (!fresh) return {};
    auto entries = root_.listing_in(dir, known_, budget_);
    if (!entries) return entries.error();
    if (!*entries) return {};  // missing: held as nullptr, it lists nothing
    at->second = *entries;
    for (const auto& e : **entries) {
      if (!e.symlink || !ldconfig_reads_entry(e.name)) continue;
      if (auto s = follow(dir, e.name); !s) return s;
    }
    return {};
  }

  std::vector<std::string> paths() const { return {paths_.begin(), paths_.end()}; }

 private:
  // A directory resolved in the root, once: a chain's hops share few directories. A dangling
  // link on the way is an error, as a volume there would make the chain go on.
  Result<std::string> resolved(const std::string& dir) {
    if (const auto it = resolved_.find(dir); it != resolved_.end()) return it->second;
    auto name = root_.canonical(dir, known_);
    if (!name) return name.error();
    resolved_.emplace(dir, *name);
    return name;
  }

  // The resolved directory `dir`, opened once; -1 when it does not exist.
  Result<int> directory_fd(const std::string& dir) {
    if (asked_.insert(dir).second && asked_.size() > kMaxDirectories)
      return Error{"library links lead into too many directories"};
    auto fd = root_.directory_in(dir, known_);
    if (!fd) return fd.error();
    return *fd != nullptr ? (*fd)->get() : -1;
  }

  // Whether `name` in the resolved `dir` may be a link: not when the directory was listed
  // without it as one (most links lead to a file beside them).
  bool may_be_link(const std::string& dir, const std::string& name) const {
    const auto it = listings_.find(dir);
    if (it == listings_.end()) return true;
    if (it->second == nullptr) return false;
    const DirEntry* entry = find_entry(*it->second, name);
    return entry != nullptr && entry->symlink;
  }

  // Moves `dir` and `name` to where the link target `to` points. Most links name a file
  // beside them, which needs no resolving.
  Status step(std::string& dir, std::string& name, const std::string& to) {
    if (to.find('/') == std::string::npos && to != "." && to != "..") {
      name = to;
      return {};
    }
    const std::string next = clean_path(to.front() == '/' ? to : dir + "/" + to);
    auto next_dir = resolved(dirname_of(next));
    if (!next_dir) return next_dir.error();
    dir = *next_dir;
    name = basename_of(next);
    return {};
  }

  // Follows `name` in the resolved `dir` link by link, noting every path it leads to; a path
  // noted before was followed from there already.
  Status follow(std::string dir, std::string name) {
    for (int hop = 0; hop < kMaxHops && may_be_link(dir, name); ++hop) {
      auto fd = directory_fd(dir);
      if (!fd) return fd.error();
      if (*fd < 0) return {};
      const std::string link = child_path(dir, name);
      if (auto s = budget_.charge(Budget::kLinksFollowed, 1, link); !s) return s;
      // Read once for the plan and this walk.
      const auto& target = root_.link_target_in(link, known_);
      if (!target) return {};  // not a link
      if (auto s = step(dir, name, *target); !s) return s;
      if (!paths_.insert(child_path(dir, name)).second) return {};
    }
    return {};
  }

  const RootFs& root_;
  ImageBudget& budget_;
  ResolvedDirs& known_;
  std::map<std::string, std::string> resolved_;
  std::set<std::string> asked_;  // the directories links lead into
  // Each directory walked, and its listing (held by known_), or nullptr where it is missing.
  std::map<std::string, const std::vector<DirEntry>*> listings_;
  std::set<std::string> paths_;
};

}  // namespace

Result<std::vector<std::string>> library_link_paths(
    const RootFs& root, const std::vector<std::string>& resolved_directories, ImageBudget& budget,
    ResolvedDirs& known) {
  LinkWalker walker(root, budget, known);
  for (const auto& dir : resolved_directories) {
    if (auto s = walker.walk_directory(dir); !s) return s.error();
  }
  return walker.paths();
}

}  // namespace gcr
