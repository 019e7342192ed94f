#include "test_support.h"

#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/filesystem.hpp>
#include <boost/process.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "base/trust.h"

namespace bp = boost::process;
namespace fs = boost::filesystem;

namespace gcr::test {
namespace {

// The test's environment with the options applied. set()/reset() rather than operator[] and
// erase(): in Boost 1.74 the latter look keys up past the end of shorter entries.
bp::environment environment_for(const RunOptions& options) {
  bp::environment env = boost::this_process::environment();
  for (const auto& name : options.unset_env) env.reset(name);
  for (const auto& [k, v] : options.env) env.set(k, v);
  return env;
}

}  // namespace

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/gcr-test-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
  ::chmod(path_.c_str(), 0755);
}

TempDir::~TempDir() {
  unmount_below(path_);
  boost::system::error_code ec;
  fs::remove_all(path_, ec);
}

void write_file(const std::string& path, const std::string& content, mode_t mode) {
  make_dirs(fs::path(path).parent_path().string());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error("cannot write " + path);
    out << content;
  }
  ::chmod(path.c_str(), mode);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void make_dirs(const std::string& path) {
  if (!path.empty()) fs::create_directories(path);
}

void make_symlink(const std::string& target, const std::string& link) {
  make_dirs(fs::path(link).parent_path().string());
  if (::symlink(target.c_str(), link.c_str()) != 0) throw std::runtime_error("symlink " + link);
}

namespace {

// A stream socket and the address of `path`.
int unix_socket(const std::string& path, sockaddr_un& addr, int type = SOCK_STREAM) {
  const int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
  addr = sockaddr_un{};
  addr.sun_family = AF_UNIX;
  if (fd < 0 || path.size() >= sizeof addr.sun_path) {
    if (fd >= 0) ::close(fd);
    throw std::runtime_error("cannot make a socket for " + path);
  }
  path.copy(addr.sun_path, path.size());
  return fd;
}

}  // namespace

ListeningSocket::ListeningSocket(const std::string& path) {
  make_dirs(fs::path(path).parent_path().string());
  sockaddr_un addr{};
  fd_ = unix_socket(path, addr);
  if (::bind(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd_, 4) != 0) {
    ::close(fd_);
    throw std::runtime_error("cannot listen on " + path);
  }
}

ListeningSocket::~ListeningSocket() {
  ::close(fd_);
}

UnixClient::UnixClient(const std::string& path, int type) {
  sockaddr_un addr{};
  fd_ = unix_socket(path, addr, type);
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd_);
    throw std::runtime_error("cannot connect to " + path + ": " + std::strerror(errno));
  }
}

UnixClient::~UnixClient() {
  ::close(fd_);
}

ProcessResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  TempDir io;
  const std::string out_path = io / "out";
  const std::string err_path = io / "err";
  const std::string in_path = io / "in";
  write_file(in_path, options.stdin_text.value_or(""));
  const bp::environment env = environment_for(options);
  const std::vector<std::string> args(argv.begin() + 1, argv.end());
  bp::child child(argv.front(), bp::args(args), env, bp::std_out > out_path, bp::std_err > err_path,
                  bp::std_in < options.stdin_path.value_or(in_path),
                  bp::start_dir(options.cwd.value_or(fs::current_path().string())));
  child.wait();
  return ProcessResult{child.exit_code(), read_file(out_path), read_file(err_path)};
}

namespace {

// The runtime runs only programs nobody but root can replace (base/trust.h). A build tree under
// a directory another user owns fails that, so its programs are then used from root-owned
// copies, made once per test process.
std::string trusted(const std::string& path) {
  static const bool build_tree_trusted =
      gcr::TrustCheck().directory(std::string(GCR_TEST_BINARY_DIR) + "/test").ok();
  if (build_tree_trusted) return path;
  static TempDir copies;
  static std::map<std::string, std::string> copied;
  const auto it = copied.find(path);
  if (it != copied.end()) return it->second;
  const std::string dir = copies / std::to_string(copied.size());
  fs::create_directory(dir);
  const std::string copy = dir + "/" + fs::path(path).filename().string();
  fs::copy_file(path, copy);
  return copied.emplace(path, copy).first->second;
}

}  // namespace

std::string built(const std::string& name) {
  for (const char* dir : {"/", "/test/"}) {
    const std::string path = std::string(GCR_TEST_BINARY_DIR) + dir + name;
    if (exists(path)) return trusted(path);
  }
  // Beside the running program: a test program copied with the others to another machine.
  const std::string beside = (fs::read_symlink("/proc/self/exe").parent_path() / name).string();
  if (exists(beside)) return trusted(beside);
  throw std::runtime_error("not built: " + name);
}

std::string test_source(const std::string& rel) {
  return std::string(GCR_TEST_SOURCE_DIR) + "/test/" + rel;
}

bool is_root() {
  return ::geteuid() == 0;
}

void require_root(const char* why) {
  if (!is_root()) throw std::runtime_error(why);
}

ProcessResult ctk(const std::vector<std::string>& args) {
  std::vector<std::string> argv{built("gpu-ctk")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace gcr::test

namespace gcr::test {

Daemon::Daemon(const std::vector<std::string>& argv, const RunOptions& options,
               const std::string& log) {
  const bp::environment env = environment_for(options);
  bp::child child(argv.front(), bp::args(std::vector<std::string>(argv.begin() + 1, argv.end())),
                  env, bp::std_out > log, bp::std_err > log, bp::std_in < "/dev/null");
  pid_ = child.id();
  child.detach();
}

Daemon::~Daemon() {
  (void)stop();
}

void Daemon::kill() {
  if (pid_ <= 0) return;
  const int pid = std::exchange(pid_, -1);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
}

int Daemon::stop() {
  if (pid_ <= 0) return -1;
  const int pid = std::exchange(pid_, -1);
  ::kill(pid, SIGTERM);
  int status = 0;
  for (int i = 0; i < 200; ++i) {
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

bool Daemon::running() {
  return pid_ > 0 && ::waitpid(pid_, nullptr, WNOHANG) == 0;
}

bool wait_for_path(const std::string& path, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

double cpu_seconds(pid_t pid) {
  const std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string field;
  unsigned long long ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stoull(field);
  }
  return static_cast<double>(ticks) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

void unmount_below(const std::string& dir) {
  std::vector<std::string> points;
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mountinfo, line)) {
    std::istringstream fields(line);
    std::string id, parent, devno, root, point;
    fields >> id >> parent >> devno >> root >> point;
    if (point == dir || point.rfind(dir + "/", 0) == 0) points.push_back(point);
  }
  for (auto it = points.rbegin(); it != points.rend(); ++it) ::umount2(it->c_str(), MNT_DETACH);
}

}  // namespace gcr::test
