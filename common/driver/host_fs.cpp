#include "driver/host_fs.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

#include "base/fs.h"
#include "base/text.h"
#include "hooks/ld_so_conf.h"
#include "hooks/rootfs.h"
#include "ldcache/image_budget.h"

namespace gcr {

Result<std::string> SystemFs::read_file(const std::string& path, std::size_t max_bytes) {
  return read_regular_file(path, max_bytes);
}

std::vector<std::string> SystemFs::list(const std::string& dir) {
  std::vector<std::string> names;
  auto fd = open_directory(dir);
  auto entries = fd ? list_directory(std::move(*fd), dir, SIZE_MAX)
                    : Result<std::vector<DirEntry>>(fd.error());
  if (!entries) return names;
  for (auto& e : *entries) names.push_back(std::move(e.name));
  return names;
}

bool SystemFs::lstat(const std::string& path, struct stat& st) {
  return ::lstat(path.c_str(), &st) == 0;
}

bool SystemFs::stat(const std::string& path, struct stat& st) {
  return ::stat(path.c_str(), &st) == 0;
}

std::string SystemFs::head(const std::string& path, std::size_t size) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  std::string bytes(size, '\0');
  const ssize_t n = fd.valid() ? ::read(fd.get(), bytes.data(), size) : -1;
  bytes.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return bytes;
}

bool SystemFs::read_only_fs(const std::string& path) {
  struct statvfs fs {};
  return ::statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
}

Result<std::string> SystemFs::resolve_in_root(const std::string& root, const std::string& path) {
  return resolvers_.try_emplace(root, root).first->second.resolve(path);
}

Result<LoaderConf> SystemFs::loader_conf(const std::string& root) {
  auto tree = RootFs::open(root);
  // The host's own configuration, bounded all the same (but for time: it is not an image's).
  ImageBudget budget = ImageBudget::untimed();
  auto conf = tree ? read_ld_so_conf(*tree, budget) : Result<LdSoConf>(tree.error());
  if (!conf) return conf.error();
  LoaderConf loader{std::move(conf->directories), std::move(conf->files), {}};
  for (const auto& pattern : conf->includes) loader.listed.push_back(dirname_of(pattern));
  return loader;
}

}  // namespace gcr
