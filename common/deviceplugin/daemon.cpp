#include "deviceplugin/daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <optional>

#include "base/fs.h"
#include "base/version.h"
#include "config/config_file.h"
#include "deviceplugin/device_state.h"
#include "deviceplugin/health.h"
#include "deviceplugin/inventory.h"
#include "deviceplugin/server.h"
#include "log/log.h"

namespace gcr {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kProgram = "gpu-device-plugin";
constexpr const char* kKubeletSocket = "kubelet.sock";
constexpr auto kTick = std::chrono::milliseconds(500);
constexpr auto kFirstRetry = std::chrono::seconds(1);
constexpr auto kLastRetry = std::chrono::seconds(30);
constexpr auto kConfigRetry = std::chrono::seconds(10);

// Our socket's file name: one per resource, beside kubelet.sock.
std::string socket_name(const std::string& resource_name) {
  std::string name = resource_name;
  std::replace(name.begin(), name.end(), '/', '-');
  return std::string(kProgram) + "-" + name + ".sock";
}

struct Options {
  std::optional<std::string> config_path;
  bool help = false;
  bool version = false;
};

Result<Options> parse_options(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--version" || a == "-v") {
      o.version = true;
    } else if (a == "--config" && i + 1 < args.size()) {
      o.config_path = args[++i];
    } else if (a.rfind("--config=", 0) == 0) {
      o.config_path = a.substr(9);
    } else {
      return Error{"unknown argument `" + a + "` (see --help)"};
    }
  }
  return o;
}

void print_usage() {
  std::printf(
      "usage: gpu-device-plugin [--config FILE]\n"
      "The Kubernetes device plugin of gpu-container-runtime: advertises the node's GPUs to the\n"
      "kubelet and hands them to containers through the runtime. It reads the runtime's\n"
      "configuration ([driver] and [device-plugin]) from FILE, $GPU_CONTAINER_RUNTIME_CONFIG or\n"
      "/etc/gpu-container-runtime/config.toml, and logs one line per event on stderr.\n");
}

// SIGTERM, SIGINT and SIGHUP arrive on a file descriptor; they are blocked before any thread
// starts, so gRPC's threads never take them.
Result<Fd> signal_fd() {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
  if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0)
    return Error{"sigprocmask: " + errno_text(errno)};
  ::signal(SIGPIPE, SIG_IGN);
  Fd fd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd.valid()) return Error{"signalfd: " + errno_text(errno)};
  return fd;
}

Result<Fd> tick_fd() {
  Fd fd(::timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!fd.valid()) return Error{"timerfd: " + errno_text(errno)};
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(kTick).count();
  itimerspec spec{};
  spec.it_interval.tv_nsec = ns;
  spec.it_value.tv_nsec = ns;
  if (::timerfd_settime(fd.get(), 0, &spec, nullptr) != 0)
    return Error{"timerfd_settime: " + errno_text(errno)};
  return fd;
}

void drain(int fd) {
  char buf[4096];
  while (::read(fd, buf, sizeof buf) > 0) {
  }
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

class Plugin {
 public:
  Plugin(const Config& config, Logger& logger)
      : config_(config),
        logger_(logger),
        health_(config.driver),
        inventory_(config, health_),
        server_(state_, config, logger),
        dir_(config.device_plugin.kubelet_dir),
        socket_(socket_name(config.device_plugin.resource_name)) {}

  int run(int signals) {
    auto ticks = tick_fd();
    if (!ticks) return fail(ticks.error());
    if (auto s = watch_directory(); !s) return fail(s.error());
    refresh();
    if (auto s = serve(); !s) return fail(s.error());
    try_register();
    while (!stopping_) wait_and_handle(signals, ticks->get());
    server_.stop();
    logger_.info("stopped; removed " + dir_ + "/" + socket_);
    return 0;
  }

 private:
  int fail(const Error& e) {
    logger_.error(e.message);
    return 1;
  }

  Status watch_directory() {
    if (auto s = make_directories(dir_); !s) return s;
    if (!inotify_.valid()) inotify_ = Fd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    if (!inotify_.valid()) return Error{"inotify: " + errno_text(errno)};
    const uint32_t events = IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF;
    if (::inotify_add_watch(inotify_.get(), dir_.c_str(), events) < 0)
      return Error{"cannot watch " + dir_ + ": " + errno_text(errno)};
    return {};
  }

  Status serve() {
    if (auto s = server_.start(dir_ + "/" + socket_); !s) return s;
    logger_.info("serving " + dir_ + "/" + socket_);
    return {};
  }

  void refresh() {
    const auto change = inventory_.refresh();
    for (const auto& line : change.lines) logger_.info(line);
    if (change.devices_changed) state_.publish(inventory_.devices());
  }

  void try_register() {
    next_register_.reset();
    if (!exists(dir_ + "/" + kKubeletSocket)) {
      if (!waiting_logged_)
        logger_.info("waiting for the kubelet (no " + dir_ + "/" + kKubeletSocket + ")");
      waiting_logged_ = true;
      return;
    }
    waiting_logged_ = false;
    const auto registered = register_with_kubelet(dir_ + "/" + kKubeletSocket, socket_,
                                                  config_.device_plugin.resource_name);
    if (registered) {
      logger_.info("registered with the kubelet as " + config_.device_plugin.resource_name + " (" +
                   std::to_string(state_.snapshot().devices.size()) + " devices)");
      backoff_ = kFirstRetry;
      return;
    }
    logger_.warning(registered.error().message + "; retrying in " +
                    std::to_string(backoff_.count()) + "s");
    next_register_ = Clock::now() + backoff_;
    backoff_ = std::min(backoff_ * 2, std::chrono::seconds(kLastRetry));
  }

  int poll_timeout() const {
    if (!next_register_) return -1;
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(*next_register_ - Clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, left.count()));
  }

  void wait_and_handle(int signals, int ticks) {
    pollfd fds[] = {{signals, POLLIN, 0}, {inotify_.get(), POLLIN, 0}, {ticks, POLLIN, 0}};
    const int n = ::poll(fds, 3, poll_timeout());
    if (n < 0 && errno != EINTR) {
      logger_.error("poll: " + errno_text(errno));
      stopping_ = true;
      return;
    }
    if ((fds[0].revents & POLLIN) != 0) on_signal(signals);
    if ((fds[1].revents & POLLIN) != 0) on_directory_events();
    if ((fds[2].revents & POLLIN) != 0) {
      drain(ticks);
      refresh();
    }
    if (next_register_ && Clock::now() >= *next_register_) try_register();
  }

  void on_signal(int signals) {
    signalfd_siginfo info{};
    while (::read(signals, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      if (info.ssi_signo == SIGHUP) {
        logger_.info("SIGHUP: serving and registering again");
        restart();
        continue;
      }
      logger_.info(std::string("stopping on ") +
                   (info.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT"));
      stopping_ = true;
    }
  }

  void on_directory_events() {
    alignas(inotify_event) char buf[8192];
    bool kubelet_restarted = false;
    bool socket_gone = false;
    bool directory_gone = false;
    while (true) {
      const ssize_t n = ::read(inotify_.get(), buf, sizeof buf);
      if (n <= 0) break;
      for (char* at = buf; at < buf + n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(at);
        const std::string name = e->len > 0 ? e->name : "";
        if ((e->mask & (IN_CREATE | IN_MOVED_TO)) != 0 && name == kKubeletSocket)
          kubelet_restarted = true;
        if ((e->mask & (IN_DELETE | IN_MOVED_FROM)) != 0 && name == socket_) socket_gone = true;
        if ((e->mask & (IN_DELETE_SELF | IN_IGNORED | IN_Q_OVERFLOW)) != 0) directory_gone = true;
        at += sizeof(inotify_event) + e->len;
      }
    }
    if (directory_gone) {
      logger_.warning(dir_ + " was removed or overflowed: watching it again");
      if (auto s = watch_directory(); !s) logger_.error(s.error().message);
    }
    if (socket_gone || directory_gone || (kubelet_restarted && !exists(dir_ + "/" + socket_))) {
      logger_.info(dir_ + "/" + socket_ + " was removed: serving it again");
      restart();
      return;
    }
    if (kubelet_restarted) {
      logger_.info("the kubelet restarted (" + std::string(kKubeletSocket) +
                   " created): registering again");
      backoff_ = kFirstRetry;
      try_register();
    }
  }

  void restart() {
    if (auto s = serve(); !s) {
      logger_.error(s.error().message);
      next_register_ = Clock::now() + backoff_;
      return;
    }
    backoff_ = kFirstRetry;
    try_register();
  }

  const Config& config_;
  Logger& logger_;
  NodeHealth health_;
  Inventory inventory_;
  DeviceState state_;
  PluginServer server_;
  std::string dir_;
  std::string socket_;
  Fd inotify_;
  bool stopping_ = false;
  bool waiting_logged_ = false;
  std::optional<Clock::time_point> next_register_;
  std::chrono::seconds backoff_ = kFirstRetry;
};

// The configuration, read again every 10 s while it is broken: a typo is one line in the
// log, not a crash loop.
std::optional<Config> load_config_patiently(const std::optional<std::string>& path, int signals,
                                            Logger& logger) {
  std::string last_error;
  while (true) {
    auto config = load_config(path ? path : config_path_from_env());
    if (config) {
      logger.info(std::string(kProgram) + " " + kVersion + ": configuration " +
                  (config->source.empty() ? "built-in defaults" : config->source));
      return *config;
    }
    if (config.error().message != last_error)
      logger.error(config.error().message + "; reading it again every 10 s");
    last_error = config.error().message;
    pollfd p{signals, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kConfigRetry).count())) > 0) {
      signalfd_siginfo info{};
      if (::read(signals, &info, sizeof info) > 0 && info.ssi_signo != SIGHUP) return std::nullopt;
    }
  }
}

}  // namespace

int run_device_plugin(const std::vector<std::string>& args) {
  Logger logger(kProgram);
  logger.set_console(true);
  auto options = parse_options(args);
  if (!options) {
    std::fprintf(stderr, "%s: %s\n", kProgram, options.error().message.c_str());
    return 2;
  }
  if (options->help) {
    print_usage();
    return 0;
  }
  if (options->version) {
    std::printf("%s version %s\n", kProgram, kVersion);
    return 0;
  }
  auto signals = signal_fd();
  if (!signals) {
    logger.error(signals.error().message);
    return 1;
  }
  const auto config = load_config_patiently(options->config_path, signals->get(), logger);
  if (!config) return 0;
  logger.set_level(config->runtime.log_level);
  Plugin plugin(*config, logger);
  return plugin.run(signals->get());
}

}  // namespace gcr
