#include "oci/handoff.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "base/fs.h"
#include "base/text.h"

namespace gcr {
namespace {

void set_cloexec(int fd) {
  const int flags = ::fcntl(fd, F_GETFD);
  if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
}

// For kernels without close_range(2): walk /proc/self/fd.
void cloexec_by_listing(unsigned first) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) {  // no /proc: every possible fd
    rlimit limit{};
    const rlim_t max =
        ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? std::min<rlim_t>(limit.rlim_cur, 1u << 20) : 1024;
    for (rlim_t fd = first; fd < max; ++fd) set_cloexec(static_cast<int>(fd));
    return;
  }
  const int own = ::dirfd(dir);
  while (const dirent* entry = ::readdir(dir)) {
    const auto fd = parse_decimal(entry->d_name);
    if (fd && *fd >= first && static_cast<int>(*fd) != own) set_cloexec(static_cast<int>(*fd));
  }
  ::closedir(dir);
}

}  // namespace

unsigned handed_fd_count(const RuncArgs& args, const char* listen_fds, const char* listen_pid) {
  unsigned count = args.preserve_fds;
  // As systemd's activation protocol (and runc) read it: LISTEN_PID must name this process.
  if (listen_fds == nullptr || listen_pid == nullptr) return count;
  const auto pid = parse_decimal(listen_pid);
  if (!pid || *pid != static_cast<std::uint64_t>(::getpid())) return count;
  const auto n = parse_decimal(listen_fds);
  if (n && *n < 65536) count += static_cast<unsigned>(*n);
  return count;
}

void close_unhanded_fds(unsigned handed_fds) {
  const unsigned first = 3 + handed_fds;
  if (::syscall(SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC) != 0) cloexec_by_listing(first);
}

Error exec_runtime(const std::string& runtime, const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.reserve(args.size() + 2);
  argv.push_back(const_cast<char*>(runtime.c_str()));
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(runtime.c_str(), argv.data());
  return Error{"cannot execute the low-level runtime: " + errno_text(errno) + " (" + runtime + ")"};
}

}  // namespace gcr
