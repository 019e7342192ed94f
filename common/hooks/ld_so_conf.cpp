#include "hooks/ld_so_conf.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

constexpr int kMaxIncludeDepth = 8;
constexpr std::size_t kMaxConfBytes = 1 << 20;
constexpr std::size_t kMaxFiles = 256;

bool has_glob(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

bool is_include(std::string_view line) {
  return line.rfind("include", 0) == 0 && line.size() > 7 && (line[7] == ' ' || line[7] == '\t');
}

Status parse_line(const std::string& line, const std::string& file,
                  std::vector<LdSoConfLine>& out) {
  if (is_include(line)) {
    std::string patterns = line.substr(8);
    std::replace(patterns.begin(), patterns.end(), '\t', ' ');
    for (auto pattern : split(patterns, ' ')) {
      std::string p(trim(pattern));
      if (!p.empty()) out.push_back(LdSoConfLine{true, std::move(p)});
    }
    return {};
  }
  if (line.rfind("hwcap", 0) == 0) return Error{"hwcap lines (" + file + ")"};
  if (line.find_first_of(" \t,:=") != std::string::npos)
    return Error{"a line ldconfig splits or types: `" + printable(line) + "` (" + file + ")"};
  out.push_back(LdSoConfLine{false, line});
  return {};
}

class ConfReader {
 public:
  explicit ConfReader(const RootFs& root) : root_(root) {}

  Status read_file(const std::string& path, int depth) {
    if (depth > kMaxIncludeDepth) return Error{"includes nested too deep (" + path + ")"};
    if (conf_.files.size() >= kMaxFiles) return Error{"too many configuration files"};
    auto fd = root_.open_regular(path);
    if (!fd) return fd.error();
    if (!*fd) return {};  // a name that went away: glob(3) would not have returned it
    struct stat st {};
    if (::fstat((*fd)->get(), &st) != 0) return Error{"cannot stat " + path};
    auto text = read_fd((*fd)->get(), kMaxConfBytes, st);
    if (!text) return text.error();
    const std::size_t index = conf_.files.size();
    conf_.files.push_back(path);
    conf_.file_mtimes.push_back(st.st_mtim);
    auto lines = parse_ld_so_conf(*text, path);
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
    auto names = matches(dir, name);
    if (!names) return names.error();
    for (const auto& n : *names) {
      if (auto s = read_file((dir == "/" ? "" : dir) + "/" + n, depth + 1); !s) return s;
    }
    return {};
  }

  // Names in `dir` matching `glob` (a plain name matches itself), sorted as glob(3) returns
  // them; no directory, none.
  Result<std::vector<std::string>> matches(const std::string& dir, const std::string& glob) {
    auto fd = root_.open_if_exists(dir, O_RDONLY | O_DIRECTORY);
    if (!fd) return fd.error();
    if (!*fd) return std::vector<std::string>{};
    auto entries = list_directory(std::move(**fd), dir, kMaxImageDirectoryEntries);
    if (!entries) return entries.error();
    std::vector<std::string> out;
    for (auto& entry : *entries) {
      if (::fnmatch(glob.c_str(), entry.name.c_str(), FNM_PERIOD) == 0)
        out.push_back(std::move(entry.name));
    }
    return out;
  }

  const RootFs& root_;
  LdSoConf conf_;
};

}  // namespace

Result<std::vector<LdSoConfLine>> parse_ld_so_conf(std::string_view text, const std::string& file) {
  std::vector<LdSoConfLine> out;
  for (auto raw : split(text, '\n')) {
    const std::string line(trim(raw.substr(0, std::min(raw.find('#'), raw.size()))));
    if (line.empty()) continue;
    if (auto s = parse_line(line, file, out); !s) return s.error();
  }
  return out;
}

Result<LdSoConf> read_ld_so_conf(const RootFs& root) {
  ConfReader reader(root);
  auto present = root.open_if_exists("/etc/ld.so.conf", O_PATH);
  if (!present) return present.error();
  if (!*present) return LdSoConf{};
  if (auto s = reader.read_file("/etc/ld.so.conf", 0); !s) return s.error();
  LdSoConf conf = reader.take();
  conf.exists = true;
  return conf;
}

}  // namespace gcr
