#include "discovery_cache/recording_host.h"

namespace gcr {

Result<std::string> RecordingHost::read_file(const std::string& path, std::size_t max_bytes) {
  consulted_.host(path, true);
  return fs_.read_file(path, max_bytes);
}

std::vector<std::string> RecordingHost::list(const std::string& dir) {
  consulted_.host(dir, true, true);
  return fs_.list(dir);
}

bool RecordingHost::lstat(const std::string& path, struct stat& st) {
  consulted_.host(path, false);
  return fs_.lstat(path, st);
}

bool RecordingHost::stat(const std::string& path, struct stat& st) {
  consulted_.host(path, true);
  return fs_.stat(path, st);
}

std::string RecordingHost::head(const std::string& path, std::size_t size) {
  consulted_.host(path, true);
  return fs_.head(path, size);
}

bool RecordingHost::read_only_fs(const std::string& path) {
  consulted_.host(path, true);
  const bool read_only = fs_.read_only_fs(path);
  read_only_.push_back({path, read_only});
  return read_only;
}

Result<std::string> RecordingHost::resolve_in_root(const std::string& root,
                                                   const std::string& path) {
  consulted_.in_root(root, path);
  return fs_.resolve_in_root(root, path);
}

Result<LoaderConf> RecordingHost::loader_conf(const std::string& root) {
  auto conf = fs_.loader_conf(root);
  if (conf) {
    for (const auto& path : conf->consulted) consulted_.in_root(root, path);
  } else {
    complete_ = false;
  }
  return conf;
}

Status RecordingHost::file(const std::string& path, struct stat& st) {
  consulted_.host(path, true);
  return trust_.file(path, st);
}

Status RecordingHost::program(const std::string& path) {
  consulted_.host(path, true);
  return trust_.program(path);
}

}  // namespace gcr
