#include "base/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <optional>

#include "base/fs.h"

namespace gcr {
namespace {

struct Pipe {
  Fd read;
  Fd write;
};

Result<Pipe> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Error{"pipe: " + errno_text(errno)};
  return Pipe{Fd(fds[0]), Fd(fds[1])};
}

// Reads both pipes until they close, the cap is reached, or the deadline passes.
Status drain(Fd& out_fd, Fd& err_fd, ChildOutput& output, std::size_t cap,
             std::chrono::steady_clock::time_point deadline) {
  std::string* sinks[2] = {&output.out, &output.err};
  Fd* fds[2] = {&out_fd, &err_fd};
  while (fds[0]->valid() || fds[1]->valid()) {
    pollfd p[2] = {{fds[0]->get(), POLLIN, 0}, {fds[1]->get(), POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return Error{"timed out"};
    const int n = ::poll(p, 2, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) return Error{"poll: " + errno_text(errno)};
    for (int i = 0; i < 2; ++i) {
      if (!fds[i]->valid() || (p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      char buf[8192];
      const ssize_t got = ::read(fds[i]->get(), buf, sizeof buf);
      if (got <= 0) {
        *fds[i] = Fd();
        continue;
      }
      if (sinks[i]->size() + static_cast<std::size_t>(got) > cap)
        return Error{"printed more than the output cap"};
      sinks[i]->append(buf, static_cast<std::size_t>(got));
    }
  }
  return {};
}

}  // namespace

std::vector<char*> c_strings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

const std::vector<std::string>& minimal_environment() {
  static const std::vector<std::string> env = {std::string("PATH=") + kStandardSearchPath};
  return env;
}

namespace {

// glibc's list of variables it ignores in setuid programs, plus every LD_ and MALLOC_ one.
bool is_loader_variable(std::string_view name) {
  static constexpr std::string_view kUnsafe[] = {
      "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES",   "HOSTALIASES", "LOCALDOMAIN", "LOCPATH",
      "NIS_PATH",   "NLSPATH",     "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR",      "TZDIR"};
  if (name.starts_with("LD_") || name.starts_with("MALLOC_")) return true;
  return std::find(std::begin(kUnsafe), std::end(kUnsafe), name) != std::end(kUnsafe);
}

}  // namespace

std::vector<std::string> hook_environment(const std::vector<std::string>& env) {
  std::vector<std::string> out;
  for (const auto& entry : env) {
    if (!is_loader_variable(std::string_view(entry).substr(0, entry.find('='))))
      out.push_back(entry);
  }
  return out.empty() ? minimal_environment() : out;
}

Result<ChildOutput> run_child(const std::vector<std::string>& argv,
                              const std::vector<std::string>& env, int timeout_seconds,
                              std::size_t max_output_bytes) {
  return run_child_with_input(argv, env, "", timeout_seconds, max_output_bytes);
}

Result<ChildOutput> run_child_with_input(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& env,
                                         std::string_view input, int timeout_seconds,
                                         std::size_t max_output_bytes) {
  if (input.size() > PIPE_BUF) return Error{"more input than a pipe takes at once"};
  auto out = make_pipe();
  auto err = make_pipe();
  if (!out) return out.error();
  if (!err) return err.error();
  std::optional<Pipe> in;
  if (!input.empty()) {
    auto made = make_pipe();
    if (!made) return made.error();
    // Within PIPE_BUF the write is whole and does not block; the child reads it, then EOF.
    if (::write(made->write.get(), input.data(), input.size()) !=
        static_cast<ssize_t>(input.size()))
      return Error{"cannot write a child's input: " + errno_text(errno)};
    made->write = Fd();
    in = std::move(*made);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (in)
    posix_spawn_file_actions_adddup2(&actions, in->read.get(), 0);
  else
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out->write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err->write.get(), 2);
  auto args = c_strings(argv);
  auto envp = c_strings(env);
  // The child starts with no signal blocked and the default for those its caller set aside
  // (the device plugin takes SIGTERM on a signalfd and ignores SIGPIPE).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigset_t defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGPIPE}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = 0;
  const int rc =
      ::posix_spawn(&pid, argv.front().c_str(), &actions, &attributes, args.data(), envp.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return Error{"cannot run " + argv.front() + ": " + errno_text(rc)};
  out->write = Fd();
  err->write = Fd();
  ChildOutput output;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  const Status drained = drain(out->read, err->read, output, max_output_bytes, deadline);
  if (!drained) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!drained) return Error{argv.front() + " " + drained.error().message};
  output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

}  // namespace gcr
