#include "hooks/ldconfig_sandbox.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "base/child_process.h"
#include "base/fs.h"

namespace gcr {
namespace {

constexpr std::size_t kMaxLdconfigBytes = 64u << 20;

Result<Fd> sealed_copy(int source) {
  struct stat st {};
  if (::fstat(source, &st) != 0) return Error{errno_text(errno)};
  if (!S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > kMaxLdconfigBytes) {
    return Error{"not a regular file of sane size"};
  }
  Fd memfd(
      static_cast<int>(::syscall(SYS_memfd_create, "ldconfig", MFD_CLOEXEC | MFD_ALLOW_SEALING)));
  if (!memfd.valid()) return Error{"memfd_create: " + errno_text(errno)};
  char buf[65536];
  off_t offset = 0;
  while (true) {
    const ssize_t n = ::pread(source, buf, sizeof buf, offset);
    if (n < 0) return Error{"read: " + errno_text(errno)};
    if (n == 0) break;
    if (auto s = write_all(memfd.get(), std::string_view(buf, static_cast<std::size_t>(n))); !s)
      return s.error();
    offset += n;
  }
  if (::fcntl(memfd.get(), F_ADD_SEALS, F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) !=
      0) {
    return Error{"sealing: " + errno_text(errno)};
  }
  return memfd;
}

// Reports the failing step to the parent through `report` and exits. Nothing is allocated
// between fork and exec: the child's memory is limited.
[[noreturn]] void child_fail(int report, const char* step) {
  const char* why = std::strerror(errno);
  const iovec parts[] = {{const_cast<char*>(step), std::strlen(step)},
                         {const_cast<char*>(": "), 2},
                         {const_cast<char*>(why), std::strlen(why)}};
  (void)!::writev(report, parts, 3);
  ::_exit(126);
}

void limit(int resource, rlim_t value) {
  const rlimit r{value, value};
  ::setrlimit(resource, &r);
}

// The container's procfs and sysfs stay visible through the recursive bind: hide them, so
// nothing in the image's ld.so.conf can reach the host through /proc/<pid>/root.
void cover(const char* path, int report) {
  struct stat st {};
  if (::lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return;
  if (::mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
              "size=0,mode=555") != 0) {
    child_fail(report, "covering /proc and /sys");
  }
}

// The mounts runc made inside the rootfs (the pod's volumes, /etc/hosts, /dev) came with the
// recursive bind: read-only for ldconfig, which may read a folder there the image's ld.so.conf
// names but must not make its links in a volume. The rootfs itself stays as it was (a
// read-only one stays read-only). Where mount_setattr is missing (Linux before 5.12) or refused
// (a seccomp filter around the runtime), they stay as they are, as before this rule.
void only_the_rootfs_writable(int report) {
  const int top = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (top < 0) child_fail(report, "opening the rootfs");
  struct statvfs fs {};
  const bool was_read_only = ::fstatvfs(top, &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
  mount_attr read_only{};
  read_only.attr_set = MOUNT_ATTR_RDONLY;
  if (::mount_setattr(top, "", AT_EMPTY_PATH | AT_RECURSIVE, &read_only, sizeof read_only) != 0) {
    if (errno == ENOSYS || errno == EPERM) return (void)::close(top);
    child_fail(report, "making the rootfs' mounts read-only");
  }
  mount_attr writable{};
  writable.attr_clr = MOUNT_ATTR_RDONLY;
  if (!was_read_only && ::mount_setattr(top, "", AT_EMPTY_PATH, &writable, sizeof writable) != 0)
    child_fail(report, "making the rootfs writable");
  ::close(top);
}

// ldconfig needs to read and write files whatever their owner, nothing else.
void drop_capabilities(int report) {
  for (int cap = 0; cap <= 63; ++cap) {
    if (cap == CAP_DAC_OVERRIDE || cap == CAP_DAC_READ_SEARCH || cap == CAP_FOWNER) continue;
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL)
      child_fail(report, "dropping capabilities");
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) child_fail(report, "no_new_privs");
}

// ldconfig's argv: the folders are scanned first, as on its command line.
std::vector<std::string> ldconfig_args(const LdconfigJob& job) {
  std::vector<std::string> args{"ldconfig", "-f", "/etc/ld.so.conf", "-C", "/etc/ld.so.cache"};
  args.insert(args.end(), job.folders.begin(), job.folders.end());
  return args;
}

[[noreturn]] void child_main(const LdconfigJob& job, int memfd, int report, pid_t parent,
                             char* const* argv) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || ::getppid() != parent)
    child_fail(report, "parent gone");
  if (::unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET) != 0)
    child_fail(report, "unshare");
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    child_fail(report, "making mounts private");
  if (::mount(job.rootfs.c_str(), job.rootfs.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) {
    child_fail(report, "bind-mounting the rootfs");
  }
  if (::chdir(job.rootfs.c_str()) != 0) child_fail(report, "entering the rootfs");
  only_the_rootfs_writable(report);
  if (::syscall(SYS_pivot_root, ".", ".") != 0) child_fail(report, "pivot_root");
  if (::umount2(".", MNT_DETACH) != 0) child_fail(report, "detaching the old root");
  if (::chdir("/") != 0) child_fail(report, "chdir /");
  cover("/proc", report);
  cover("/sys", report);
  drop_capabilities(report);
  limit(RLIMIT_CORE, 0);
  limit(RLIMIT_CPU, 10);
  limit(RLIMIT_AS, rlim_t{2} << 30);
  limit(RLIMIT_FSIZE, rlim_t{64} << 20);
  limit(RLIMIT_NOFILE, 256);
  char* envp[] = {nullptr};
  ::syscall(SYS_execveat, memfd, "", argv, envp, AT_EMPTY_PATH);
  child_fail(report, "executing ldconfig");
}

std::string read_report(int fd, std::chrono::steady_clock::time_point deadline) {
  std::string report;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return report;
    char buf[512];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return report;
    report.append(buf, static_cast<std::size_t>(n));
  }
}

// Waits for the child until the deadline, then kills it. A pidfd (Linux 5.3 and later) wakes
// the wait when the child exits; without one, the wait looks every millisecond.
int wait_until(pid_t pid, std::chrono::steady_clock::time_point deadline, bool& timed_out) {
  const Fd exited(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return -1;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return status;
    }
    if (exited.valid()) {
      pollfd p{exited.get(), POLLIN, 0};
      ::poll(&p, 1, static_cast<int>(left.count()));
    } else {
      ::usleep(1000);
    }
  }
}

}  // namespace

Result<bool> is_static_elf(int fd) {
  Elf64_Ehdr eh{};
  if (::pread(fd, &eh, sizeof eh, 0) != static_cast<ssize_t>(sizeof eh) ||
      std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256) {
    return Error{"not a 64-bit ELF executable"};
  }
  std::vector<Elf64_Phdr> headers(eh.e_phnum);
  const auto bytes = static_cast<ssize_t>(headers.size() * sizeof(Elf64_Phdr));
  if (::pread(fd, headers.data(), static_cast<std::size_t>(bytes),
              static_cast<off_t>(eh.e_phoff)) != bytes)
    return Error{"truncated ELF program headers"};
  return std::none_of(headers.begin(), headers.end(),
                      [](const Elf64_Phdr& ph) { return ph.p_type == PT_INTERP; });
}

namespace {

Error ldconfig_failure(const std::string& ldconfig, const std::string& why) {
  return Error{"cannot run ldconfig: " + why + " (" + ldconfig + ")"};
}

Status check_static(const std::string& ldconfig, int fd) {
  auto is_static = is_static_elf(fd);
  if (!is_static) return ldconfig_failure(ldconfig, is_static.error().message);
  if (!*is_static)
    return ldconfig_failure(ldconfig,
                            "it is dynamically linked, so the container's loader would run it");
  return {};
}

}  // namespace

Status check_ldconfig(const std::string& ldconfig) {
  Fd binary(::open(ldconfig.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!binary.valid()) return ldconfig_failure(ldconfig, errno_text(errno));
  return check_static(ldconfig, binary.get());
}

Status run_ldconfig_in_rootfs(const LdconfigJob& job) {
  const auto fail = [&](const std::string& why) { return ldconfig_failure(job.ldconfig, why); };
  Fd binary(::open(job.ldconfig.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!binary.valid()) return fail(errno_text(errno));
  auto memfd = sealed_copy(binary.get());
  if (!memfd) return fail(memfd.error().message);
  if (auto s = check_static(job.ldconfig, memfd->get()); !s) return s;
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return fail("pipe: " + errno_text(errno));
  Fd report_read(pipe_fds[0]);
  Fd report_write(pipe_fds[1]);
  const std::vector<std::string> args = ldconfig_args(job);
  const std::vector<char*> argv = c_strings(args);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return fail("fork: " + errno_text(errno));
  if (pid == 0) child_main(job, memfd->get(), report_write.get(), parent, argv.data());
  report_write = Fd();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(job.timeout_seconds);
  const std::string report = read_report(report_read.get(), deadline);
  bool timed_out = false;
  const int status = wait_until(pid, deadline, timed_out);
  if (timed_out) return fail("timed out after " + std::to_string(job.timeout_seconds) + "s");
  if (!report.empty()) return fail(report);
  if (status < 0 || !WIFEXITED(status)) return fail("killed by a signal");
  if (WEXITSTATUS(status) != 0) return fail("exit status " + std::to_string(WEXITSTATUS(status)));
  return {};
}

}  // namespace gcr
