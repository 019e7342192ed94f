#include "devchar/watch.h"

#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>

#include "base/fs.h"
#include "base/text.h"
#include "vocabulary/imex_channel.h"

namespace gcr {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kSettle = std::chrono::milliseconds(100);
constexpr const char* kSubdirs[] = {"nvidia-caps", kImexChannelModule};
constexpr auto kRewatchEvery = std::chrono::seconds(1);
constexpr std::uint32_t kMask = IN_CREATE | IN_MOVED_TO | IN_ONLYDIR;
// The NVIDIA subdirectories are watched as what they are; /dev itself where it leads, as its
// nodes are found.
constexpr std::uint32_t kSubdirMask = kMask | IN_DONT_FOLLOW;
// The directory itself gone from its name: removed, moved, or unmounted (IN_UNMOUNT and
// IN_IGNORED come unasked).
constexpr std::uint32_t kGoneAsked = IN_DELETE_SELF | IN_MOVE_SELF;
constexpr std::uint32_t kGone = kGoneAsked | IN_UNMOUNT | IN_IGNORED;

bool is_subdir(const std::string& name) {
  for (const char* subdir : kSubdirs) {
    if (name == subdir) return true;
  }
  return false;
}

// /dev and NVIDIA's directories in it, through one inotify fd.
class DevWatch {
 public:
  static Result<DevWatch> open(const std::string& dev_dir) {
    DevWatch watch(Fd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)), dev_dir);
    if (!watch.fd_.valid()) return Error{"cannot watch " + dev_dir + ": " + errno_text(errno)};
    if (auto s = watch.watch_dev(); !s) return s.error();
    return watch;
  }

  [[nodiscard]] int fd() const { return fd_.get(); }

  // Whether the directory went from its name (a driver container's /dev replaced): watched
  // again by watch_dev once it is there.
  [[nodiscard]] bool lost() const { return dev_wd_ < 0; }

  Status watch_dev() {
    dev_wd_ = ::inotify_add_watch(fd_.get(), dev_dir_.c_str(), kMask | kGoneAsked);
    if (dev_wd_ < 0)
      return Error{"cannot watch the device nodes: " + errno_text(errno) + " (" + dev_dir_ + ")"};
    for (const char* subdir : kSubdirs) watch_subdir(subdir);
    return {};
  }

  // Reads what is pending: whether an event concerns NVIDIA's nodes (or events were lost).
  Result<bool> read_events() {
    alignas(inotify_event) char buffer[4096];
    bool relevant = false;
    while (true) {
      const ssize_t n = ::read(fd_.get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return relevant;
      if (n <= 0) return Error{"cannot read the watch on " + dev_dir_ + ": " + errno_text(errno)};
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        relevant = take(*event) || relevant;
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
  }

 private:
  DevWatch(Fd fd, std::string dev_dir) : fd_(std::move(fd)), dev_dir_(std::move(dev_dir)) {}

  void watch_subdir(const std::string& name) {
    const int wd = ::inotify_add_watch(fd_.get(), child_path(dev_dir_, name).c_str(), kSubdirMask);
    if (wd >= 0) subdirs_[wd] = name;
  }

  bool take(const inotify_event& event) {
    if (event.mask & IN_Q_OVERFLOW) {
      // A directory's creation may be among the events lost.
      for (const char* subdir : kSubdirs) watch_subdir(subdir);
      return true;
    }
    if (event.wd == dev_wd_ && (event.mask & kGone) != 0) {
      ::inotify_rm_watch(fd_.get(), dev_wd_);
      dev_wd_ = -1;
      return false;
    }
    if (event.wd != dev_wd_) {
      if (event.mask & IN_IGNORED) subdirs_.erase(event.wd);
      return subdirs_.count(event.wd) != 0;
    }
    const std::string name = event.len > 0 ? std::string(event.name) : "";
    if ((event.mask & IN_ISDIR) && is_subdir(name)) {
      watch_subdir(name);
      return true;
    }
    return name.rfind("nvidia", 0) == 0;
  }

  Fd fd_;
  std::string dev_dir_;
  int dev_wd_ = -1;
  std::map<int, std::string> subdirs_;  // watch descriptor -> name
};

// The signals that end the watch, blocked and readable from the returned fd.
Result<Fd> stop_signals() {
  sigset_t set;
  ::sigemptyset(&set);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaddset(&set, sig);
  if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0)
    return Error{"cannot block SIGTERM: " + errno_text(errno)};
  Fd fd(::signalfd(-1, &set, SFD_CLOEXEC));
  if (!fd.valid()) return Error{"cannot wait for SIGTERM: " + errno_text(errno)};
  return fd;
}

constexpr Clock::time_point kNever = Clock::time_point::max();

int poll_timeout(Clock::time_point due) {
  if (due == kNever) return -1;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(due - Clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

}  // namespace

Status watch_dev_nodes(const std::string& dev_dir, const std::function<void()>& sync) {
  auto signals = stop_signals();
  if (!signals) return signals.error();
  auto watch = DevWatch::open(dev_dir);
  if (!watch) return watch.error();
  sync();
  Clock::time_point due = kNever;  // when the events seen since the last sync are answered
  while (true) {
    // A directory gone from its name is looked for again every second, and linked once back.
    if (watch->lost() && due == kNever) due = Clock::now() + kRewatchEvery;
    pollfd fds[2] = {{signals->get(), POLLIN, 0}, {watch->fd(), POLLIN, 0}};
    const int ready = ::poll(fds, 2, poll_timeout(due));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Error{"cannot wait for events: " + errno_text(errno)};
    if (fds[0].revents != 0) return {};
    if (fds[1].revents != 0) {
      auto relevant = watch->read_events();
      if (!relevant) return relevant.error();
      if (*relevant && due == kNever) due = Clock::now() + kSettle;
    }
    if (due != kNever && Clock::now() >= due) {
      due = kNever;
      if (!watch->lost() || watch->watch_dev()) sync();
    }
  }
}

}  // namespace gcr
