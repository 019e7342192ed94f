// Whether only root can change what a path names: every directory on the way to it, through
// symlinks too, is owned by root and not writable by group or others (a sticky directory is
// accepted, since only an entry's owner can replace it there), and the file itself is owned by
// root and not writable by group or others. Programs we run as root (the low-level runtime,
// hooks, gpu-ctk) and files we hand to containers from the driver root must pass; so must the
// directories gpu-device-plugin makes things in (work_directory).
#pragma once

#include <sys/stat.h>

#include <map>
#include <string>

#include "base/result.h"

namespace gcr {

// One file's own verdict: owned by root (or `also_owner`) and not writable by group or others.
// The error is "not owned by root" or "writable by group or others".
[[nodiscard]] Status owned_by_root_only(const struct stat& st, uid_t also_owner = 0);

// The verdicts driver discovery and the create path ask for, as a seam: TrustCheck is the
// real one; unit tests give an in-memory host instead.
class FileTrust {
 public:
  virtual ~FileTrust() = default;
  // A file (any type) under trusted directories, owned by root, not writable by others;
  // `st` receives its lstat. Symlinks on the way are followed and the targets checked too.
  [[nodiscard]] virtual Status file(const std::string& path, struct stat& st) = 0;
  // file() plus: a regular file that can be executed.
  [[nodiscard]] virtual Status program(const std::string& path) = 0;
};

class TrustCheck final : public FileTrust {
 public:
  // `also_owner`: a user trusted as root is (0: root alone; tests give their own).
  explicit TrustCheck(uid_t also_owner = 0) : also_owner_(also_owner) {}

  // A directory and everything above it.
  [[nodiscard]] Status directory(const std::string& path);
  [[nodiscard]] Status file(const std::string& path, struct stat& st) override;
  [[nodiscard]] Status program(const std::string& path) override;
  // A directory we make things in (mkdir -p first, when it is missing): everything above it
  // judged as directory() judges it, and the directory itself (or, while it is missing, the
  // nearest one above it that exists, where ours would be made) owned by root and not writable
  // by group or others. A sticky directory is not enough there: anyone could make our names in
  // it first. Errors name where the directory really is.
  [[nodiscard]] Status work_directory(const std::string& path);

 private:
  Status entry(const std::string& path, const struct stat& st) const;
  Status real_chain(const std::string& real, bool last_is_directory);
  uid_t also_owner_;
  std::map<std::string, Status> directories_;      // verdicts, each directory checked once
  std::map<std::string, std::string> real_names_;  // each trusted directory's name without symlinks
};

}  // namespace gcr
