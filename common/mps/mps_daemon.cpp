#include "mps/mps_daemon.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cmath>
#include <set>
#include <thread>
#include <utility>

#include "base/child_process.h"
#include "base/fs.h"
#include "base/text.h"
#include "base/trust.h"
#include "ldcache/elf_library.h"
#include "ldcache/image_budget.h"
#include "vocabulary/capabilities.h"

namespace gcr {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kStartTimeout = std::chrono::seconds(5);
constexpr auto kStopTimeout = std::chrono::seconds(5);
constexpr auto kPollInterval = std::chrono::milliseconds(20);
constexpr int kAskSeconds = 5;
constexpr std::size_t kMaxAnswerBytes = 64 * 1024;
// What NVIDIA's control client says while the daemon serves another client.
constexpr std::string_view kBusy = "Cannot send command to MPS control daemon process";
constexpr int kBusyRetries = 10;
constexpr auto kBusyPause = std::chrono::milliseconds(50);
// The child's exit statuses before exec: no private /dev/shm (needs CAP_SYS_ADMIN), no exec.
constexpr int kNoNamespace = 126;
constexpr int kNoExec = 127;
// More device memory than any GPU has (a zebibyte): past it an answer is not a limit.
constexpr double kMaxMemoryMib = 1e12;
constexpr std::uint64_t kMibPerGib = 1024;
constexpr std::uint64_t kMibPerTib = 1024 * 1024;
// The daemon's log read per look: more since the last look is read from its last bytes (the
// limits are set back all the same).
constexpr std::size_t kMaxLogRead = 64 * 1024;
constexpr std::size_t kMaxCommandText = 200;
// The daemon's log (its standard output) is emptied past this size.
constexpr std::size_t kMaxLogBytes = 4u << 20;
// Servers asked about: each is one more question to the daemon.
constexpr unsigned kMaxServers = 64;

std::string first_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return std::string(trim(line));
}

std::string exit_text(int status) {
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code == kNoNamespace)
      return "exited before starting: cannot give it its own /dev/shm (a mount namespace needs "
             "CAP_SYS_ADMIN)";
    if (code == kNoExec) return "exited before starting: cannot execute it";
    return "exited with status " + std::to_string(code);
  }
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status));
  return "stopped";
}

// Whether only root can change what the directory `fd` holds (`closed`), or only root owns it
// (its mode is ours to set). `path` names it in errors.
Status judge_directory(int fd, const std::string& path, bool closed, uid_t also_owner) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Error{errno_text(errno) + " (" + path + ")"};
  if (!closed) st.st_mode &= ~static_cast<mode_t>(S_IWGRP | S_IWOTH);
  if (auto s = owned_by_root_only(st, also_owner); !s)
    return Error{s.error().message + " (" + path + ")"};
  return {};
}

// The directory `path` (in `dir`), made or opened without following a symlink, and judged.
Result<Fd> own_directory(const Fd& dir, const std::string& path, bool closed, uid_t also_owner) {
  auto fd = make_directory_at(dir.get(), basename_of(path), path);
  const Status s = fd ? judge_directory(fd->get(), path, closed, also_owner) : fd.error();
  if (!s) return s.error().wrap("MPS directory refused");
  return fd;
}

// `links` in `dir` (driver/bin or driver/lib), each made beside its name and renamed over it, then
// every other entry removed.
Status place_links(const Fd& dir, const std::string& path, const std::vector<MpsDriverLink>& links,
                   bool library) {
  std::set<std::string> names;
  for (const auto& link : links) {
    if (link.library != library || !names.insert(link.name).second) continue;
    const std::string temporary = "." + link.name + ".new";
    ::unlinkat(dir.get(), temporary.c_str(), 0);
    if (::symlinkat(link.target.c_str(), dir.get(), temporary.c_str()) != 0 ||
        ::renameat(dir.get(), temporary.c_str(), dir.get(), link.name.c_str()) != 0)
      return Error{"cannot link " + link.name + " to " + link.target + ": " + errno_text(errno) +
                   " (" + path + ")"};
  }
  Fd listing(::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto entries = list_directory(std::move(listing), path, 4096);
  if (!entries) return entries.error();
  for (const auto& e : *entries) {
    if (!names.count(e.name)) ::unlinkat(dir.get(), e.name.c_str(), 0);
  }
  return {};
}

// The server pids a get_server_list answer names, one a line: at most kMaxServers (one server
// per user ID; more is not an answer).
std::vector<std::string> server_pids(std::string_view answer) {
  std::vector<std::string> pids;
  for (const auto& line : split(answer, '\n')) {
    const auto pid = trim(line);
    if (pid.empty() || pid.size() > 10 || pid.find_first_not_of("0123456789") != pid.npos) continue;
    if (pids.size() == kMaxServers) break;
    pids.emplace_back(pid);
  }
  return pids;
}

// A /proc file's text ("" when it cannot be read: the process is gone).
std::string proc_text(const std::string& path) {
  auto text = read_regular_file(path, 64 * 1024);
  return text ? *text : std::string();
}

// Whether the process `pid` has exited and waits to be reaped (state Z in /proc/<pid>/stat,
// after its name's closing parenthesis).
bool is_zombie(std::string_view pid) {
  const std::string stat = proc_text("/proc/" + std::string(pid) + "/stat");
  const auto name_end = stat.rfind(')');
  return name_end == std::string::npos || stat.compare(name_end, 3, ") Z") == 0;
}

// Whether a thread of `pid` has a child still running (/proc/<pid>/task/<tid>/children): the
// control daemon forks each MPS server, and reaps it some time after it exits.
bool has_running_children(pid_t pid) {
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  Fd listing(::open(tasks.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto entries = list_directory(std::move(listing), tasks, 4096);
  if (!entries) return false;
  for (const auto& e : *entries) {
    const std::string children = proc_text(tasks + "/" + e.name + "/children");
    for (const auto& child : split(children, ' ')) {
      if (!trim(child).empty() && !is_zombie(trim(child))) return true;
    }
  }
  return false;
}

// Whether the process `pid` was started with every variable of `wanted` ("NAME=value").
bool has_environment(const std::string& pid, const std::vector<std::string>& wanted) {
  const std::string environment = proc_text("/proc/" + pid + "/environ");
  const auto vars = split(environment, '\0');
  return std::all_of(wanted.begin(), wanted.end(), [&](const std::string& w) {
    return std::find(vars.begin(), vars.end(), w) != vars.end();
  });
}

// Whether the process `pid` was started as the control daemon: NVIDIA's program is one with
// `-d` (it daemonizes) or `-f` (in the foreground, as the plugin starts it). Without either it is
// a control client (an operator's session, a pod's, a question of this plugin or a killed one),
// with the same executable and pipe directory.
bool started_as_daemon(const std::string& pid) {
  const std::string cmdline = proc_text("/proc/" + pid + "/cmdline");
  const auto args = split(cmdline, '\0');
  return std::any_of(args.begin() + (args.empty() ? 0 : 1), args.end(),
                     [](std::string_view arg) { return arg == "-d" || arg == "-f"; });
}

// Whether `pid` runs the control daemon `program` (its resolved path) for `pipe_dir`: its
// executable, started as the daemon, and the pipe its environment names.
bool is_daemon_of(const std::string& pid, const std::string& program, const std::string& pipe_dir) {
  char exe[PATH_MAX];
  const ssize_t n = ::readlink(("/proc/" + pid + "/exe").c_str(), exe, sizeof exe);
  if (n <= 0 || std::string_view(exe, static_cast<std::size_t>(n)) != program) return false;
  return started_as_daemon(pid) && has_environment(pid, {"CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir});
}

Status make_driver_dirs(const Fd& dir, const MpsPlan& plan, uid_t also_owner) {
  auto driver = own_directory(dir, plan.dir + "/driver", true, also_owner);
  if (!driver) return driver.error();
  for (const bool library : {false, true}) {
    const std::string path = library ? plan.lib_dir() : plan.bin_dir();
    auto links = own_directory(*driver, path, true, also_owner);
    if (!links) return links.error();
    if (auto s = place_links(*links, path, plan.driver, library); !s) return s;
  }
  return {};
}

// The soname the loader finds a driver library by: as discovery kept it, or read from the file.
std::optional<std::string> soname_of(const DriverLibrary& lib) {
  if (lib.elf) return lib.elf->soname;
  const Fd found(::open(lib.host_path.c_str(), O_PATH | O_CLOEXEC));
  if (!found.valid()) return std::nullopt;
  auto fd = reopen_regular(found, lib.host_path);
  if (!fd) return std::nullopt;
  ImageBudget budget;
  auto elf = read_elf_library(fd->get(), budget, lib.host_path);
  return elf ? elf->soname : std::nullopt;
}

}  // namespace

unsigned share_percentage(std::int64_t replicas, std::int64_t shares) {
  const auto n = std::max<std::int64_t>(1, replicas);
  const auto k = std::clamp<std::int64_t>(shares, 1, n);
  return static_cast<unsigned>(std::max<std::int64_t>(1, 100 * k / n));
}

std::uint64_t share_mib(std::uint64_t memory_mib, std::int64_t replicas, std::int64_t shares) {
  const auto n = std::max<std::int64_t>(1, replicas);
  const auto k = static_cast<std::uint64_t>(std::clamp<std::int64_t>(shares, 1, n));
  // In that order: k/n of the memory, never more than the GPU has.
  return memory_mib / static_cast<std::uint64_t>(n) * k +
         memory_mib % static_cast<std::uint64_t>(n) * k / static_cast<std::uint64_t>(n);
}

std::optional<double> parse_mps_percentage(std::string_view text) {
  const std::string value(trim(text));
  if (value.empty() || value.size() > 16 ||
      value.find_first_not_of("0123456789.") != std::string::npos)
    return std::nullopt;
  char* end = nullptr;
  const double pct = std::strtod(value.c_str(), &end);
  if (end != value.c_str() + value.size() || !(pct >= 0.0 && pct <= 100.0)) return std::nullopt;
  return pct;
}

std::optional<std::uint64_t> parse_mps_memory_mib(std::string_view text) {
  const std::string value(trim(text));
  if (value.size() < 2 || value.size() > 24) return std::nullopt;
  const char unit = value.back();
  const std::string number = value.substr(0, value.size() - 1);
  // What the client prints: digits, perhaps a fraction; nothing strtod would also take.
  if (number.empty() || number.find_first_not_of("0123456789.") != std::string::npos ||
      std::count(number.begin(), number.end(), '.') > 1)
    return std::nullopt;
  char* end = nullptr;
  const double amount = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return std::nullopt;
  double mib = 0;
  switch (unit) {
    case 'K':
      mib = amount / 1024;
      break;
    case 'M':
      mib = amount;
      break;
    case 'G':
      mib = amount * 1024;
      break;
    case 'T':
      mib = amount * 1024 * 1024;
      break;
    default:
      return std::nullopt;
  }
  if (!(mib < kMaxMemoryMib)) return std::nullopt;
  return static_cast<std::uint64_t>(std::llround(mib));
}

bool mps_memory_reads_as(std::string_view answer, std::uint64_t mib) {
  const std::string value(trim(answer));
  if (value.size() < 2 || value.size() > 24) return false;
  const std::string number = value.substr(0, value.size() - 1);
  if (number.find_first_not_of("0123456789") != std::string::npos)
    return parse_mps_memory_mib(value) == mib;  // a fraction: not a truncated whole unit
  std::uint64_t shown = 0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), shown);
  if (number.empty() || error != std::errc() || end != number.data() + number.size()) return false;
  switch (value.back()) {
    case 'M':
      return shown == mib;
    case 'G':
      return mib >= kMibPerGib && shown == mib / kMibPerGib;
    case 'T':
      return mib >= kMibPerTib && shown == mib / kMibPerTib;
    default:
      return false;
  }
}

std::vector<std::string> limit_commands_in_log(std::string_view log) {
  std::vector<std::string> commands;
  constexpr std::string_view kCmd = "] Cmd:";
  std::size_t start = 0;
  for (std::size_t end = log.find('\n'); end != std::string_view::npos;
       start = end + 1, end = log.find('\n', start)) {
    const std::string_view line = log.substr(start, end - start);
    const auto at = line.find(kCmd);
    if (at == std::string_view::npos) continue;
    const std::string_view command = trim(line.substr(at + kCmd.size()));
    if (command.rfind("set_", 0) == 0) commands.push_back(printable(command, kMaxCommandText));
  }
  return commands;
}

std::string mps_dir(const std::string& mps_root, const std::string& resource, std::int64_t replicas,
                    std::int64_t shares) {
  std::string name = resource;
  std::replace(name.begin(), name.end(), '/', '-');
  return child_path(clean_path(mps_root),
                    name + "/" + std::to_string(shares) + "-of-" + std::to_string(replicas));
}

Status check_mps_root(const std::string& mps_root, uid_t also_owner) {
  if (auto s = TrustCheck(also_owner).work_directory(mps_root); !s)
    return s.error().wrap("`device-plugin.mps-root` refused");
  return {};
}

Result<Fd> make_mps_dirs(const MpsPlan& plan, uid_t also_owner) {
  const std::string root = clean_path(plan.root);
  const std::string share = dirname_of(plan.dir);
  if (dirname_of(share) != root)
    return Error{"the MPS directory is not below mps-root " + root + " (" + plan.dir + ")"};
  if (auto s = check_mps_root(root, also_owner); !s) return s.error();
  // Only root can change the way to it now: made and opened by name, and judged once more.
  if (auto s = make_directories(root); !s) return s.error();
  auto opened = open_directory(root);
  if (!opened) return opened.error().wrap("cannot open mps-root");
  Fd dir = std::move(*opened);
  if (auto s = judge_directory(dir.get(), root, true, also_owner); !s)
    return s.error().wrap("`device-plugin.mps-root` refused");
  for (const auto& path : {share, plan.dir}) {
    auto next = own_directory(dir, path, true, also_owner);
    if (!next) return next.error();
    dir = std::move(*next);
  }
  auto log = own_directory(dir, plan.log_dir(), true, also_owner);
  if (!log) return log.error();
  auto shm = own_directory(dir, plan.shm_dir(), false, also_owner);
  if (!shm) return shm.error();
  // Clients of any user share the server's /dev/shm, as they would the host's.
  if (::fchmod(shm->get(), 01777) != 0)
    return Error{"cannot open " + plan.shm_dir() + " to the clients: " + errno_text(errno)};
  if (auto s = make_driver_dirs(dir, plan, also_owner); !s) return s.error();
  return own_directory(dir, plan.pipe_dir(), true, also_owner);
}

std::optional<std::string> mps_control_program(DriverHost& host) {
  CapabilitySet compute;
  compute.add(Capability::kCompute);
  for (const auto& file : host.files().binaries(compute)) {
    if (file.path.ends_with("/nvidia-cuda-mps-control")) return file.host_path;
  }
  return std::nullopt;
}

Result<std::vector<MpsDriverLink>> mps_driver_links(DriverHost& host) {
  CapabilitySet caps;
  caps.add(Capability::kCompute);
  std::vector<MpsDriverLink> links;
  for (const auto& file : host.files().binaries(caps)) {
    if (file.path.ends_with("/nvidia-cuda-mps-server"))
      links.push_back({false, "nvidia-cuda-mps-server", file.host_path});
  }
  if (links.empty())
    return Error{"no nvidia-cuda-mps-server in the driver root (" + host.files().driver_path("/") +
                 "): install NVIDIA's MPS (nvidia-cuda-mps)"};
  caps.add(Capability::kUtility);
  auto libraries = host.files().libraries(caps, LibArch::k64);
  if (!libraries) return libraries.error();
  bool libcuda = false;
  for (const auto& lib : *libraries) {
    const auto soname = soname_of(lib);
    if (!soname || !is_soname_file_name(*soname)) continue;
    libcuda = libcuda || *soname == "libcuda.so.1";
    links.push_back({true, *soname, lib.host_path});
  }
  if (!libcuda)
    return Error{"no libcuda.so.1 for the MPS servers in the driver root (" +
                 host.files().driver_path("/") + ")"};
  return links;
}

pid_t find_mps_daemon(const std::string& program, const std::string& pipe_dir) {
  Fd proc(::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto entries = list_directory(std::move(proc), "/proc", std::size_t{1} << 22);
  if (!entries) return -1;
  for (const auto& e : *entries) {
    if (e.name.empty() || e.name.size() > 10 ||
        e.name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    if (is_daemon_of(e.name, program, pipe_dir)) return static_cast<pid_t>(std::stol(e.name));
  }
  return -1;
}

Result<std::string> ask_mps(const std::string& program, const std::string& pipe_dir,
                            const std::string& command) {
  const std::vector<std::string> env = {std::string("PATH=") + kStandardSearchPath,
                                        "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir};
  auto run = run_child_with_input({program}, env, command + "\n", kAskSeconds, kMaxAnswerBytes);
  // The daemon talks to one control client at a time: another one (a pod's, an operator's)
  // makes ours fail at once with this line. Asked again a little later.
  for (int again = 0; again < kBusyRetries && run && run->exit_code != 0 &&
                      (run->out + run->err).find(kBusy) != std::string::npos;
       ++again) {
    std::this_thread::sleep_for(kBusyPause);
    run = run_child_with_input({program}, env, command + "\n", kAskSeconds, kMaxAnswerBytes);
  }
  if (!run) return run.error().wrap("cannot ask the MPS control daemon `" + command + "`");
  std::string answer = run->out;
  while (!answer.empty() && answer.back() == '\n') answer.pop_back();
  if (run->exit_code != 0) {
    const std::string why = first_line(run->out.empty() ? run->err : run->out);
    return Error{"the MPS control daemon does not answer `" + command +
                 "`: " + (why.empty() ? "status " + std::to_string(run->exit_code) : why) + " (" +
                 pipe_dir + ")"};
  }
  if (answer.rfind("Unknown command", 0) == 0)
    return Error{"the MPS control daemon refuses `" + command + "`: " + first_line(answer)};
  return answer;
}

Result<MpsState> read_mps_state(const std::string& program, const std::string& pipe_dir,
                                std::size_t gpus) {
  MpsState state;
  auto servers = ask_mps(program, pipe_dir, "get_server_list");
  if (!servers) return servers.error();
  auto pct = ask_mps(program, pipe_dir, "get_default_active_thread_percentage");
  if (!pct) return pct.error();
  state.thread_percentage = parse_mps_percentage(*pct);
  for (std::size_t i = 0; i < gpus; ++i) {
    auto mem =
        ask_mps(program, pipe_dir, "get_default_device_pinned_mem_limit " + std::to_string(i));
    if (!mem) return mem.error();
    state.pinned.push_back(std::string(trim(*mem)));
  }
  for (const auto& pid : server_pids(*servers)) {
    ++state.servers;
    auto clients = ask_mps(program, pipe_dir, "get_client_list " + pid);
    if (!clients) continue;
    for (const auto& client : split(*clients, '\n')) {
      if (!trim(client).empty()) ++state.clients;
    }
  }
  return state;
}

MpsDaemon::MpsDaemon(MpsPlan plan) : plan_(std::move(plan)) {
  std::string devices;
  for (const auto& gpu : plan_.gpus) devices += (devices.empty() ? "" : ",") + gpu.uuid;
  env_ = {"PATH=" + plan_.bin_dir() + ":" + kStandardSearchPath,
          "LD_LIBRARY_PATH=" + plan_.lib_dir()};
  env_.push_back("CUDA_MPS_PIPE_DIRECTORY=" + plan_.pipe_dir());
  env_.push_back("CUDA_MPS_LOG_DIRECTORY=" + plan_.log_dir());
  env_.push_back("CUDA_VISIBLE_DEVICES=" + devices);
}

MpsDaemon::~MpsDaemon() {
  if (child_ > 0 || adopted_) stop();
}

Result<std::string> MpsDaemon::ask(const std::string& command) const {
  return ask_mps(plan_.program, plan_.pipe_dir(), command);
}

void MpsDaemon::reap(bool wait) {
  if (child_ <= 0) return;
  int status = 0;
  pid_t got = 0;
  while ((got = ::waitpid(child_, &status, wait ? 0 : WNOHANG)) < 0 && errno == EINTR) {
  }
  if (got == child_ || (got < 0 && errno == ECHILD)) child_ = -1;
}

// Through the fd start() opened: a path swapped since cannot send the unlinks elsewhere.
void MpsDaemon::clear_pipe_dir() const {
  if (!pipe_.valid()) return;
  Fd listing(::openat(pipe_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  auto entries = list_directory(std::move(listing), plan_.pipe_dir(), 4096);
  if (!entries) return;
  for (const auto& e : *entries) ::unlinkat(pipe_.get(), e.name.c_str(), 0);
}

Status MpsDaemon::spawn() {
  const std::vector<std::string> argv = {plan_.program, "-f"};
  auto args = c_strings(argv);
  auto envp = c_strings(env_);
  const std::string shm = plan_.shm_dir();
  // In the foreground the daemon logs every command it is sent to its standard output: to
  // log/control.log, where restore_changed_limits() reads them.
  const std::string log_path = plan_.log_dir() + "/control.log";
  const Fd log(
      ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!log.valid())
    return Error{"cannot open the MPS control daemon's log: " + errno_text(errno) + " (" +
                 log_path + ")"};
  const pid_t pid = ::fork();
  if (pid < 0) return Error{"cannot start the MPS control daemon: fork: " + errno_text(errno)};
  if (pid == 0) {
    // Only async-signal-safe calls from here: the plugin has threads.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (::unshare(CLONE_NEWNS) != 0 ||
        ::mount(nullptr, "/", nullptr, MS_REC | MS_SLAVE, nullptr) != 0 ||
        ::mount(shm.c_str(), "/dev/shm", nullptr, MS_BIND, nullptr) != 0)
      ::_exit(kNoNamespace);
    const int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) ::dup2(null, 0);
    ::dup2(log.get(), 1);
    ::dup2(log.get(), 2);
    // Nothing of the plugin's (its sockets, NVML's files) outlives it in the daemon.
    ::close_range(3, ~0U, 0);
    ::execve(args[0], args.data(), envp.data());
    ::_exit(kNoExec);
  }
  child_ = pid;
  return {};
}

Status MpsDaemon::wait_until_answering() {
  const auto deadline = Clock::now() + kStartTimeout;
  while (true) {
    int status = 0;
    const pid_t got = ::waitpid(child_, &status, WNOHANG);
    if (got == child_) {
      child_ = -1;
      return Error{"the MPS control daemon " + exit_text(status) + " (" + plan_.program + ")"};
    }
    struct stat st {};
    if (::stat((plan_.pipe_dir() + "/control").c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
      auto answer = ask("get_server_list");
      if (answer) return {};
      if (Clock::now() >= deadline) return answer.error();
    }
    if (Clock::now() >= deadline)
      return Error{"the MPS control daemon made no control socket in 5 s (" + plan_.pipe_dir() +
                   ")"};
    std::this_thread::sleep_for(kPollInterval);
  }
}

Status MpsDaemon::set_limits() {
  const std::string pct = std::to_string(plan_.thread_percentage);
  if (auto s = ask("set_default_active_thread_percentage " + pct); !s) return s.error();
  auto got = ask("get_default_active_thread_percentage");
  if (!got) return got.error();
  const auto read_back = parse_mps_percentage(*got);
  if (!read_back || std::lround(*read_back) != plan_.thread_percentage)
    return Error{"the MPS control daemon reports a thread percentage of `" + *got + "`, not the " +
                 pct + " set"};
  // By position in the daemon's CUDA_VISIBLE_DEVICES, the device ordinal its clients and its
  // server use (a UUID is resolved only where the daemon sees a GPU).
  for (std::size_t i = 0; i < plan_.gpus.size(); ++i) {
    const auto& gpu = plan_.gpus[i];
    if (!gpu.pinned_mib) continue;
    const std::string limit = std::to_string(*gpu.pinned_mib) + "M";
    const std::string ordinal = std::to_string(i);
    if (auto s = ask("set_default_device_pinned_mem_limit " + ordinal + " " + limit); !s)
      return s.error();
    auto mem = ask("get_default_device_pinned_mem_limit " + ordinal);
    if (!mem) return mem.error();
    if (!mps_memory_reads_as(*mem, *gpu.pinned_mib))
      return Error{"the MPS control daemon reports a pinned-memory limit of `" + *mem + "` for " +
                   gpu.uuid + ", not the " + std::to_string(*gpu.pinned_mib) + " MiB set"};
  }
  return {};
}

void MpsDaemon::skip_control_log() {
  if (!control_log_.valid()) {
    const std::string path = plan_.log_dir() + "/control.log";
    control_log_ = Fd(::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
  }
  struct stat st {};
  if (control_log_.valid() && ::fstat(control_log_.get(), &st) == 0) control_log_seen_ = st.st_size;
}

// Every server's own limits set back to the defaults we gave the daemon: a client may have
// changed a running server's (set_active_thread_percentage <pid>, set_device_pinned_mem_limit
// <pid> <device>).
Status MpsDaemon::restore_servers() {
  auto servers = ask("get_server_list");
  if (!servers) return servers.error();
  for (const auto& pid : server_pids(*servers)) {
    auto pct =
        ask("set_active_thread_percentage " + pid + " " + std::to_string(plan_.thread_percentage));
    if (!pct) return pct.error();
    for (std::size_t i = 0; i < plan_.gpus.size(); ++i) {
      if (!plan_.gpus[i].pinned_mib) continue;
      auto mem = ask("set_device_pinned_mem_limit " + pid + " " + std::to_string(i) + " " +
                     std::to_string(*plan_.gpus[i].pinned_mib) + "M");
      if (!mem) return mem.error();
    }
  }
  return {};
}

// Whether a `set_*` command sets one of the limits we gave the daemon, to our value (the
// daemon logs our own commands too).
bool MpsDaemon::sets_our_limit(const std::string& command) const {
  const auto words = split(command, ' ');
  const auto pct_is_ours = [&](std::string_view text) {
    const auto pct = parse_mps_percentage(text);
    return pct && std::lround(*pct) == plan_.thread_percentage;
  };
  const auto memory_is_ours = [&](std::string_view ordinal, std::string_view value) {
    std::size_t i = 0;
    const auto [end, error] = std::from_chars(ordinal.data(), ordinal.data() + ordinal.size(), i);
    if (error != std::errc() || end != ordinal.data() + ordinal.size() || i >= plan_.gpus.size() ||
        !plan_.gpus[i].pinned_mib)
      return false;
    return parse_mps_memory_mib(value) == plan_.gpus[i].pinned_mib;
  };
  if (words.size() == 2 && words[0] == "set_default_active_thread_percentage")
    return pct_is_ours(words[1]);
  if (words.size() == 3 && words[0] == "set_default_device_pinned_mem_limit")
    return memory_is_ours(words[1], words[2]);
  if (words.size() == 3 && words[0] == "set_active_thread_percentage") return pct_is_ours(words[2]);
  if (words.size() == 4 && words[0] == "set_device_pinned_mem_limit")
    return memory_is_ours(words[2], words[3]);
  return false;
}

Result<std::string> MpsDaemon::restore_changed_limits() {
  if (auto seen = limit_changes_logged()) {
    if (!owed_ || owed_->empty())
      owed_ = *seen;
    else if (!seen->empty())
      *owed_ += "`, `" + *seen;
  }
  if (!owed_) return std::string();
  if (auto s = restore_servers(); !s) return s.error();
  if (auto s = set_limits(); !s) return s.error();
  return std::exchange(owed_, std::nullopt).value();
}

std::optional<std::string> MpsDaemon::limit_changes_logged() {
  if (!control_log_.valid()) skip_control_log();
  struct stat st {};
  if (!control_log_.valid() || ::fstat(control_log_.get(), &st) != 0) return std::nullopt;
  if (st.st_size < control_log_seen_) control_log_seen_ = 0;  // made anew
  if (st.st_size == control_log_seen_) return std::nullopt;
  const off_t from = std::max<off_t>(control_log_seen_, st.st_size - off_t{kMaxLogRead});
  std::string piece(static_cast<std::size_t>(st.st_size - from), '\0');
  const ssize_t got = ::pread(control_log_.get(), piece.data(), piece.size(), from);
  piece.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  // Up to the last whole line: the rest is read with the next look.
  const auto last = piece.rfind('\n');
  piece.resize(last == std::string::npos ? 0 : last + 1);
  const bool skipped = from > control_log_seen_;
  control_log_seen_ = from + static_cast<off_t>(piece.size());
  std::vector<std::string> changes;
  for (auto& command : limit_commands_in_log(piece)) {
    if (!sets_our_limit(command)) changes.push_back(std::move(command));
  }
  // The log only grows while the daemon runs: past its budget it is emptied, and what may have
  // been written meanwhile is answered by setting every limit back.
  const bool emptied =
      control_log_seen_ > off_t{kMaxLogBytes} && ::ftruncate(control_log_.get(), 0) == 0;
  if (emptied) control_log_seen_ = 0;
  if (changes.empty() && !skipped && !emptied) return std::nullopt;
  return join(changes, "`, `");
}

Status MpsDaemon::start() {
  auto pipe = make_mps_dirs(plan_);
  if (!pipe) return pipe.error();
  pipe_ = std::move(*pipe);
  // A daemon an earlier plugin left (killed before it could stop it) is kept, with its clients:
  // watched through its pipe, its limits set again.
  adopted_ = child_ <= 0 && ask("get_server_list").ok();
  if (adopted_) {
    char resolved[PATH_MAX];
    if (::realpath(plan_.program.c_str(), resolved) != nullptr) program_path_ = resolved;
    adopted_pid_ = find_mps_daemon(program_path_, plan_.pipe_dir());
    outdated_ = adopted_pid_ > 0 && !has_environment(std::to_string(adopted_pid_), env_);
  }
  if (child_ <= 0 && !adopted_) {
    clear_pipe_dir();
    if (auto s = spawn(); !s) return s;
    if (auto s = wait_until_answering(); !s) {
      stop();
      return s;
    }
  }
  control_log_ = Fd();
  skip_control_log();
  if (auto s = restore_servers(); !s) return s;
  return set_limits();
}

Status MpsDaemon::check(bool ask_it) {
  if (child_ > 0) {
    int status = 0;
    const pid_t got = ::waitpid(child_, &status, WNOHANG);
    if (got == child_) {
      child_ = -1;
      return Error{"the MPS control daemon " + exit_text(status) + " (" + plan_.program + ")"};
    }
  } else if (!adopted_) {
    return Error{"the MPS control daemon is not running (" + plan_.pipe_dir() + ")"};
  } else if (adopted_pid_ > 0 &&
             !is_daemon_of(std::to_string(adopted_pid_), program_path_, plan_.pipe_dir())) {
    return Error{"the MPS control daemon an earlier plugin started is gone (" + plan_.pipe_dir() +
                 ")"};
  }
  if (!ask_it) return {};
  auto answer = ask("get_server_list");
  if (!answer) return answer.error();
  return {};
}

bool MpsDaemon::runs_servers() {
  reap(false);
  if (child_ > 0) return has_running_children(child_);
  return adopted_ && adopted_pid_ > 0 &&
         is_daemon_of(std::to_string(adopted_pid_), program_path_, plan_.pipe_dir()) &&
         has_running_children(adopted_pid_);
}

Status MpsDaemon::update_limits(std::vector<MpsGpu> gpus) {
  plan_.gpus = std::move(gpus);
  if (auto s = set_limits(); !s) return s;
  // The defaults hold for servers started from now on: the running ones (and the clients that
  // join them) get the new limits too.
  return restore_servers();
}

void MpsDaemon::stop() {
  (void)ask("quit");
  const auto deadline = Clock::now() + kStopTimeout;
  while (child_ > 0 && Clock::now() < deadline) {
    reap(false);
    if (child_ > 0) std::this_thread::sleep_for(kPollInterval);
  }
  // An adopted daemon is not our child: gone once its process is (or, where /proc did not show
  // it, once it no longer answers); one still there after the timeout (a client holding its
  // socket keeps our quit from it) is killed, or it would serve beside its replacement.
  const auto adopted_runs = [&] {
    return adopted_pid_ > 0
               ? is_daemon_of(std::to_string(adopted_pid_), program_path_, plan_.pipe_dir())
               : ask("get_server_list").ok();
  };
  while (adopted_ && adopted_runs() && Clock::now() < deadline)
    std::this_thread::sleep_for(kPollInterval);
  if (adopted_ && adopted_pid_ > 0 && adopted_runs()) ::kill(adopted_pid_, SIGKILL);
  adopted_ = false;
  adopted_pid_ = -1;
  outdated_ = false;
  if (child_ > 0) {
    ::kill(child_, SIGKILL);
    reap(true);
  }
  clear_pipe_dir();
}

}  // namespace gcr
