#include "hooks/ld_so_conf.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <map>

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

constexpr int kMaxIncludeDepth = 8;
constexpr std::size_t kMaxFiles = 256;

bool has_glob(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

bool is_include(std::string_view line) {
  return line.rfind("include", 0) == 0 && line.size() > 7 && (line[7] == ' ' || line[7] == '\t');
}

Status parse_line(const std::string& line, const std::string& file, ImageBudget& budget,
                  std::vector<LdSoConfLine>& out) {
  if (is_include(line)) {
    for (std::size_t at = line.find_first_not_of(" \t", 8); at != std::string::npos;
         at = line.find_first_not_of(" \t", at)) {
      const std::size_t end = std::min(line.find_first_of(" \t", at), line.size());
      const std::string_view pattern = trim(std::string_view(line).substr(at, end - at));
      at = end;
      if (pattern.empty()) continue;
      if (auto s = budget.charge(Budget::kConfigurationLines, 1, file); !s) return s;
      out.push_back(LdSoConfLine{true, std::string(pattern)});
    }
    return {};
  }
  if (line.rfind("hwcap", 0) == 0) return Error{"hwcap lines (" + file + ")"};
  if (line.find_first_of(" \t,:=") != std::string::npos)
    return Error{"a line ldconfig splits or types: `" + printable(line) + "` (" + file + ")"};
  if (auto s = budget.charge(Budget::kConfigurationLines, 1, file); !s) return s;
  out.push_back(LdSoConfLine{false, line});
  return {};
}

class ConfReader {
 public:
  ConfReader(const RootFs& root, ImageBudget& budget) : root_(root), budget_(budget) {}

  Status read_file(const std::string& path, int depth) {
    if (depth > kMaxIncludeDepth) return Error{"includes nested too deep (" + path + ")"};
    if (conf_.files.size() >= kMaxFiles) return Error{"too many configuration files"};
    struct stat st {};
    auto fd = root_.open_regular(path, &st);
    if (!fd) return fd.error();
    if (!*fd) return {};  // a name that went away: glob(3) would not have returned it
    if (auto s =
            budget_.charge(Budget::kConfigurationBytes, static_cast<std::size_t>(st.st_size), path);
        !s)
      return s;
    auto text = read_fd((*fd)->get(), kBudgetConfigurationBytes, st);
    if (!text) return text.error();
    const std::size_t index = conf_.files.size();
    conf_.files.push_back(path);
    conf_.file_stats.push_back(st);
    auto lines = parse_ld_so_conf(*text, path, budget_);
    conf_.texts.push_back(std::move(*text));
    if (!lines) return lines.error();
    for (auto& line : *lines) {
      if (!line.include) {
        conf_.directories.push_back(std::move(line.value));
        conf_.directory_files.push_back(index);
      } else if (auto s = include(line.value, path, depth); !s) {
        return s;
      }
    }
    return {};
  }

  LdSoConf take() { return std::move(conf_); }

 private:
  Status include(const std::string& pattern, const std::string& file, int depth) {
    std::string full = pattern;
    if (full.front() != '/') full = file.substr(0, file.rfind('/') + 1) + pattern;
    const auto slash = full.rfind('/');
    const std::string dir = slash == 0 ? "/" : full.substr(0, slash);
    const std::string name = full.substr(slash + 1);
    if (has_glob(dir)) return Error{"a glob above the last component (" + file + ")"};
    conf_.includes.push_back(full);
    auto names = matches(dir, name, file);
    if (!names) return names.error();
    for (const auto& n : *names) {
      if (auto s = read_file(child_path(dir, n), depth + 1); !s) return s;
    }
    return {};
  }

  // Names in `dir` matching `glob` (a plain name matches itself), sorted as glob(3) returns
  // them; no directory, none. Each name tried counts against the budget, for `file`.
  Result<std::vector<std::string>> matches(const std::string& dir, const std::string& glob,
                                           const std::string& file) {
    auto names = listing(dir);
    if (!names) return names.error();
    if (auto s = budget_.charge(Budget::kIncludeMatches, (*names)->size(), file); !s)
      return s.error();
    std::vector<std::string> out;
    for (const auto& name : **names) {
      if (::fnmatch(glob.c_str(), name.c_str(), FNM_PERIOD) == 0) out.push_back(name);
    }
    return out;
  }

  // The names in `dir`, listed once per plan; none when it does not exist.
  Result<const std::vector<std::string>*> listing(const std::string& dir) {
    if (const auto it = listings_.find(dir); it != listings_.end()) return &it->second;
    auto fd = root_.open_if_exists(dir, O_RDONLY | O_DIRECTORY);
    if (!fd) return fd.error();
    std::vector<std::string> names;
    if (*fd) {
      auto entries = list_image_directory(std::move(**fd), dir, budget_);
      if (!entries) return entries.error();
      names.reserve(entries->size());
      for (auto& entry : *entries) names.push_back(std::move(entry.name));
    }
    return &listings_.emplace(dir, std::move(names)).first->second;
  }

  const RootFs& root_;
  ImageBudget& budget_;
  LdSoConf conf_;
  std::map<std::string, std::vector<std::string>> listings_;
};

}  // namespace

Result<std::vector<LdSoConfLine>> parse_ld_so_conf(std::string_view text, const std::string& file,
                                                   ImageBudget& budget) {
  std::vector<LdSoConfLine> out;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view raw = text.substr(start, end - start);
    start = end + 1;
    const std::string line(trim(raw.substr(0, std::min(raw.find('#'), raw.size()))));
    if (line.empty()) continue;
    if (auto s = parse_line(line, file, budget, out); !s) return s.error();
  }
  return out;
}

Result<LdSoConf> read_ld_so_conf(const RootFs& root, ImageBudget& budget) {
  ConfReader reader(root, budget);
  if (auto s = reader.read_file("/etc/ld.so.conf", 0); !s) return s.error();
  LdSoConf conf = reader.take();
  conf.exists = !conf.files.empty();
  return conf;
}

}  // namespace gcr
