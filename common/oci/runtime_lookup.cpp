#include "base/child_process.h"

#include <sys/stat.h>
#include <unistd.h>

#include <optional>

#include "base/text.h"
#include "base/trust.h"

namespace gcr {
namespace {

struct Identity {
  dev_t dev;
  ino_t ino;
};

std::optional<Identity> identity_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return Identity{st.st_dev, st.st_ino};
}

enum class Verdict { kUsable, kMissing, kSelf, kUntrusted };

struct Judgement {
  Verdict verdict;
  std::string why;  // for kUntrusted
};

// runc runs as root with the container's whole configuration: only a program that nobody but
// root can replace is used.
Judgement judge(const std::string& path, const std::optional<Identity>& self, TrustCheck& trust) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
    return {Verdict::kMissing, ""};
  }
  if (self && self->dev == st.st_dev && self->ino == st.st_ino) return {Verdict::kSelf, ""};
  if (auto s = trust.program(path); !s) return {Verdict::kUntrusted, s.error().message};
  return {Verdict::kUsable, ""};
}

std::vector<std::string> search_dirs(const std::string& path_env) {
  std::vector<std::string> dirs;
  for (const std::string& list : {path_env, std::string(kStandardSearchPath)}) {
    for (std::string_view dir : split(list, ':')) {
      if (dir.empty() || dir.front() != '/') continue;
      std::string d(dir);
      bool seen = false;
      for (const auto& existing : dirs) seen = seen || existing == d;
      if (!seen) dirs.push_back(std::move(d));
    }
  }
  return dirs;
}

}  // namespace

Result<std::string> find_low_level_runtime(const std::vector<std::string>& candidates,
                                           const std::string& path_env, const std::string& self) {
  const auto me = identity_of(self);
  TrustCheck trust;
  std::vector<std::string> tried;
  for (const auto& candidate : candidates) {
    if (candidate.find('/') != std::string::npos) {
      if (candidate.front() != '/') {
        tried.push_back(candidate + " (not an absolute path)");
        continue;
      }
      const auto j = judge(candidate, me, trust);
      if (j.verdict == Verdict::kUsable) return candidate;
      tried.push_back(candidate + (j.verdict == Verdict::kSelf ? " (is this shim)"
                                   : j.verdict == Verdict::kUntrusted
                                       ? " (refused: " + j.why + ")"
                                       : " (not an executable file)"));
      continue;
    }
    bool skipped_self = false;
    std::string untrusted;
    for (const auto& dir : search_dirs(path_env)) {
      const std::string path = dir + "/" + candidate;
      const auto j = judge(path, me, trust);
      if (j.verdict == Verdict::kUsable) return path;
      skipped_self = skipped_self || j.verdict == Verdict::kSelf;
      if (j.verdict == Verdict::kUntrusted && untrusted.empty()) untrusted = j.why;
    }
    tried.push_back(candidate + (!untrusted.empty() ? " (refused: " + untrusted + ")"
                                 : skipped_self     ? " (only this shim in PATH)"
                                                    : " (not in PATH)"));
  }
  return Error{"no low-level runtime found: tried " + join(tried, ", ")};
}

Result<std::string> find_program(const std::string& name, const std::string& path_env) {
  TrustCheck trust;
  std::string untrusted;
  for (const auto& dir : search_dirs(path_env)) {
    const auto j = judge(dir + "/" + name, std::nullopt, trust);
    if (j.verdict == Verdict::kUsable) return dir + "/" + name;
    if (j.verdict == Verdict::kUntrusted && untrusted.empty()) untrusted = j.why;
  }
  return Error{name + (untrusted.empty() ? " is not in PATH" : " refused: " + untrusted)};
}

}  // namespace gcr
