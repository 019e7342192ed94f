// A runc stand-in for tests. It records what it was given into $FAKE_RUNC_RECORD (JSON:
// argv, environment, open fds, and a copy of the file named by $FAKE_RUNC_SPEC), then
// exits with $FAKE_RUNC_EXIT (default 0).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "base/fs.h"
#include "base/text.h"
#include "json/strict_json.h"

extern char** environ;

namespace {

gcr::Json open_fds() {
  gcr::Json fds = gcr::Json::array();
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return fds;
  const int own = ::dirfd(dir);
  while (const dirent* entry = ::readdir(dir)) {
    const auto fd = gcr::parse_decimal(entry->d_name);
    if (fd && static_cast<int>(*fd) != own) fds.push_back(*fd);
  }
  ::closedir(dir);
  std::sort(fds.begin(), fds.end());
  return fds;
}

}  // namespace

int main(int argc, char** argv) {
  gcr::Json record = gcr::Json::object();
  record["argv"] = std::vector<std::string>(argv, argv + argc);
  gcr::Json env = gcr::Json::array();
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  record["env"] = env;
  record["fds"] = open_fds();
  if (const char* spec = std::getenv("FAKE_RUNC_SPEC")) {
    auto text = gcr::read_regular_file(spec, 64u << 20);
    record["spec"] = text ? gcr::Json(*text) : gcr::Json(nullptr);
  }
  if (const char* out = std::getenv("FAKE_RUNC_RECORD")) {
    gcr::Fd fd(::open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (fd.valid()) (void)gcr::write_all(fd.get(), record.dump(2));
  }
  const char* code = std::getenv("FAKE_RUNC_EXIT");
  return code != nullptr ? std::atoi(code) : 0;
}
