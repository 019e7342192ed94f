// The image's loader configuration as ldconfig reads it: /etc/ld.so.conf, the files its
// `include` lines name (globs in the last component, sorted, relative to the including file),
// and the directories they list. Read inside the rootfs. Forms ldconfig gives a meaning this
// reader does not reproduce (hwcap lines, `dir=TYPE`, several directories on one line, globs
// above the last component) are errors: the caller then leaves the work to ldconfig.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "hooks/rootfs.h"
#include "ldcache/image_budget.h"

namespace gcr {

struct LdSoConf {
  bool exists = false;                       // /etc/ld.so.conf is there
  std::vector<std::string> files;            // every configuration file read, ld.so.conf first
  std::vector<struct stat> file_stats;       // beside `files`: each one's fstat when it was read
  std::vector<std::string> texts;            // beside `files`: what each held
  std::vector<std::string> directories;      // in the order ldconfig meets them, duplicates kept
  std::vector<std::size_t> directory_files;  // beside `directories`: the file naming each
  std::vector<std::string> includes;         // every include pattern, made absolute
};

// Every file and listing is charged to `budget`; a directory is listed once, however many
// include lines name it.
[[nodiscard]] Result<LdSoConf> read_ld_so_conf(const RootFs& root, ImageBudget& budget);

// What one line of a configuration file says: a directory, or one pattern of an `include` line.
struct LdSoConfLine {
  bool include = false;
  std::string value;
};

// The lines of one configuration file's text, comments and blank lines left out, an include
// line's patterns one by one, each charged to `budget`; an error (naming `file`) for the forms
// this reader refuses.
[[nodiscard]] Result<std::vector<LdSoConfLine>> parse_ld_so_conf(std::string_view text,
                                                                 const std::string& file,
                                                                 ImageBudget& budget);

}  // namespace gcr
