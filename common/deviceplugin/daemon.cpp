#include "deviceplugin/daemon.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "base/environment.h"
#include "base/fs.h"
#include "base/node_stat.h"
#include "base/version.h"
#include "config/config_file.h"
#include "deviceplugin/device_state.h"
#include "deviceplugin/health.h"
#include "deviceplugin/imex.h"
#include "deviceplugin/inventory.h"
#include "deviceplugin/mps_keeper.h"
#include "deviceplugin/nvidia_plugin_options.h"
#include "deviceplugin/resource_plugin.h"
#include "deviceplugin/server.h"
#include "deviceplugin/xid_watch.h"
#include "driver/host_facts.h"
#include "driver/nvml.h"
#include "labels/labels_file.h"
#include "labels/labels_keeper.h"
#include "log/log.h"

namespace gcr {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kProgram = "gpu-device-plugin";

// NVML_COMPUTEMODE_* as nvidia-smi names them.
std::string compute_mode_name(unsigned mode) {
  switch (mode) {
    case 0:
      return "Default";
    case 1:
      return "Exclusive_Thread";
    case 2:
      return "Prohibited";
    case 3:
      return "Exclusive_Process";
    default:
      return std::to_string(mode);
  }
}

constexpr auto kTick = std::chrono::milliseconds(500);
constexpr auto kConfigRetry = std::chrono::seconds(10);
constexpr auto kNvmlRetry = std::chrono::seconds(5);

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
    } else if (auto refusal = nvidia_plugin_flag_refusal(a)) {
      return Error{*refusal};
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

// The configuration from --config's FILE, else where $GPU_CONTAINER_RUNTIME_CONFIG or the
// default location says.
Result<Config> read_config(const std::optional<std::string>& path) {
  return load_config(path ? path : config_path_from_env());
}

// What the plugin is made from: the shim's keys and the log level (set in place) are not.
bool same_for_plugin(const Config& a, const Config& b) {
  return a.driver == b.driver && a.device_plugin == b.device_plugin &&
         a.cdi.default_kind == b.cdi.default_kind;
}

// The signals that came while a plugin stopped to start again, taken from `signals`.
struct PendingSignals {
  std::optional<int> terminate;  // SIGTERM or SIGINT
  bool hangup = false;
};

PendingSignals pending_signals(int signals) {
  PendingSignals out;
  signalfd_siginfo info{};
  while (::read(signals, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    if (info.ssi_signo == SIGHUP) {
      out.hangup = true;
    } else if (!out.terminate) {
      out.terminate = static_cast<int>(info.ssi_signo);
    }
  }
  return out;
}

// The labels file of the configuration SIGHUP replaced, when the new one names another: NFD
// would read both.
void remove_labels_file(const std::string& path, Logger& logger) {
  if (path.empty()) return;
  const auto removed = LabelsFile(path).remove();
  if (!removed) {
    logger.warning(removed.error().message);
  } else if (*removed) {
    logger.info("labels file " + path + " removed: the configuration names another");
  }
}

// The daemon: the inventory, NVML and its Xid watch, and one ResourcePlugin per resource.
// `kept_mps`: the MPS daemons of the plugin a changed configuration stopped, still serving
// (mps_daemons_carry_over), or none.
class Plugin {
 public:
  Plugin(const Config& config, std::optional<std::string> config_path, Logger& logger,
         int mps_changed, std::unique_ptr<MpsKeeper> kept_mps)
      : config_(config),
        config_path_(std::move(config_path)),
        logger_(logger),
        health_(config.driver),
        inventory_(config, health_),
        labels_(config),
        dir_(config.device_plugin.kubelet_dir),
        mps_changed_(mps_changed),
        mps_(std::move(kept_mps)) {}

  int run(int signals) {
    auto ticks = tick_fd();
    if (!ticks) return fail(ticks.error());
    registered_ = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!registered_.valid()) return fail(Error{"eventfd: " + errno_text(errno)});
    if (auto s = watch_directory(); !s) return fail(s.error());
    refresh();
    while (!stopping_ && !changed_config_) wait_and_handle(signals, ticks->get());
    xids_.reset();
    for (auto& [resource, plugin] : plugins_) plugin->stop();
    if (!changed_config_ || !mps_daemons_carry_over(config_, *changed_config_)) mps_.reset();
    logger_.info("stopped; removed our sockets from " + dir_);
    return 0;
  }

  // The configuration SIGHUP found changed, to start again with; nullopt when it stopped for
  // good.
  [[nodiscard]] std::optional<Config> take_changed_config() { return std::move(changed_config_); }
  // The MPS daemons still serving for the changed configuration, or none.
  [[nodiscard]] std::unique_ptr<MpsKeeper> take_mps() { return std::move(mps_); }

 private:
  int fail(const Error& e) {
    logger_.error(e.message);
    return 1;
  }

  Status watch_directory() {
    if (auto s = make_directories(dir_); !s) return s;
    if (!inotify_.valid()) inotify_ = Fd(::inotify_init1(IN_CLOEXEC | IN_NONBLOCK));
    if (!inotify_.valid()) return Error{"inotify: " + errno_text(errno)};
    // IN_ONLYDIR: a file put at the directory's name is no directory to watch.
    const uint32_t events =
        IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_DELETE_SELF | IN_ONLYDIR;
    if (::inotify_add_watch(inotify_.get(), dir_.c_str(), events) < 0)
      return Error{"cannot watch " + dir_ + ": " + errno_text(errno)};
    return {};
  }

  // NVML from the driver root, once the driver is there; without it: sysfs topology, no MIG
  // devices and no Xid events, said once, and NVML tried again every 5 s.
  void open_nvml() {
    if (nvml_ || (inventory_.gpus().empty() && !inventory_.awaiting_uuid())) return;
    nvml_retry_at_ = Clock::now() + kNvmlRetry;
    DriverHost host(config_.driver, lstat_node);
    std::string why = "no libnvidia-ml in the driver root";
    if (const auto path = driver_library_path(host, Capability::kUtility, "libnvidia-ml.so")) {
      auto opened = Nvml::open(*path);
      if (opened) {
        nvml_ = std::move(*opened);
        logger_.info("NVML loaded from " + *path);
        return;
      }
      why = opened.error().message;
    }
    if (nvml_error_ != why)
      logger_.warning("NVML unavailable: " + why +
                      "; topology from sysfs, no MIG devices, no Xid events");
    nvml_error_ = why;
  }

  // A new watch (new GPUs, a reset): what the old one queued is taken first, and a failing
  // wait it reported is forgotten (the new one reports its own), or every GPU would stay
  // Unhealthy with no watch left to say the wait works again.
  void watch_xids() {
    if (xids_) on_xids();
    xids_.reset();
    if (auto cleared = inventory_.apply_xid_wait_failure(std::nullopt); !cleared.lines.empty())
      publish(cleared);
    if (!nvml_ || !config_.device_plugin.health) return;
    std::vector<PciAddress> buses;
    for (const auto& gpu : inventory_.gpus()) buses.push_back(gpu.bus);
    auto watch = XidWatch::start(*nvml_, buses);
    if (!watch) {
      logger_.warning("no Xid events: " + watch.error().message);
      return;
    }
    for (const auto& gpu : (*watch)->unwatched())
      logger_.warning("no Xid events from " + gpu + ": its health from its device node and " +
                      "/proc alone");
    xids_ = std::move(*watch);
  }

  void publish(const InventoryChange& change) {
    for (const auto& line : change.lines) logger_.info(line);
    if (change.gpus_changed || (!nvml_ && Clock::now() >= nvml_retry_at_)) {
      open_nvml();
      watch_xids();
    }
    const auto topology = std::make_shared<const Topology>(inventory_.topology());
    const auto resources = inventory_.resources();
    for (const auto& resource : resources) {
      auto& plugin = plugins_[resource];
      const bool fresh = plugin == nullptr;
      if (fresh)
        plugin = std::make_unique<ResourcePlugin>(resource, config_, logger_, registered_.get());
      if (fresh || change.devices_changed)
        plugin->state().publish(devices_of_resource(resource), topology);
      else if (change.topology_changed)
        plugin->state().set_topology(topology);
      if (fresh) plugin->restart();
    }
    // A resource of which nothing is left (a MIG profile repartitioned away) lists no device:
    // the kubelet then counts none, and Allocate hands out none of those gone.
    if (!change.devices_changed) return;
    for (auto& [resource, plugin] : plugins_) {
      if (resources.count(resource) == 0) plugin->state().publish({}, topology);
    }
  }

  // The device lists again: what MPS says of their health changed.
  void publish_health() {
    InventoryChange health;
    health.devices_changed = true;
    publish(health);
  }

  // The inventory's devices of `resource`, with MPS's say on their health and shares.
  std::vector<PluginDevice> devices_of_resource(const std::string& resource) const {
    auto devices = of_resource(inventory_.devices(), resource);
    if (!config_.mps()) return devices;
    const auto daemons_of = mps_ ? mps_->states() : MpsStates{};
    for (auto& d : devices) {
      if (d.healthy && !mps_refused_.empty()) {
        d.healthy = false;
        d.unhealthy_because = mps_refused_;
      }
      // The daemons of its GPU's share count, one per container size: each one's limits, and
      // Unhealthy until every one serves.
      std::int64_t daemons = 0;
      for (auto it = daemons_of.lower_bound({resource, d.replicas, 1});
           it != daemons_of.end() && it->first.resource == resource &&
           it->first.replicas == d.replicas;
           ++it) {
        const auto& daemon = it->second;
        if (d.healthy && !daemon.problem.empty()) {
          d.healthy = false;
          d.unhealthy_because = daemon.problem;
        }
        // A daemon started before the GPU came (restarted for it a tick later) is no daemon of
        // its yet.
        if (daemon.serving.count(d.uuid) == 0) continue;
        ++daemons;
        if (const auto mib = daemon.share_mib.find(d.uuid); mib != daemon.share_mib.end())
          d.mps_share_mib[it->first.shares] = mib->second;
      }
      if (d.healthy && daemons < d.replicas) {
        d.healthy = false;
        d.unhealthy_because = kMpsNotStarted;
      }
    }
    return devices;
  }

  // sharing = mps: mps-root judged before any daemon starts (check_mps_root). Refused: said
  // once, every share Unhealthy for that reason, judged again on every refresh until it
  // passes. True when the verdict changed.
  bool judge_mps_root() {
    if (mps_root_ok_) return false;
    const auto verdict = check_mps_root(config_.device_plugin.mps_root);
    if (verdict) {
      mps_root_ok_ = true;
      if (mps_refused_.empty()) return false;
      logger_.info("`device-plugin.mps-root` accepted now: starting the MPS control daemons");
      mps_refused_.clear();
      return true;
    }
    if (verdict.error().message == mps_refused_) return false;
    mps_refused_ = verdict.error().message;
    logger_.error(mps_refused_ + "; every MPS share is Unhealthy until it is fixed");
    mps_.reset();  // daemons an earlier configuration's plugin left serving in it: stopped
    return true;
  }

  // sharing = mps: for the GPUs of each resource and share count n, one control daemon per
  // container size k from 1 to n (a daemon's limits hold for all its clients), kept by the
  // keeper's thread, which says when one's health changes; true when mps-root's verdict changed.
  bool keep_mps() {
    if (!config_.mps()) return false;
    const bool judged = judge_mps_root();
    if (!mps_root_ok_) return judged;
    std::map<MpsGroup, std::vector<Gpu>> groups;
    for (const auto& resource : inventory_.resources()) {
      std::set<std::string> uuids;
      for (const auto& d : of_resource(inventory_.devices(), resource)) uuids.insert(d.uuid);
      for (const auto& gpu : inventory_.gpus()) {
        if (uuids.count(gpu.uuid) == 0) continue;
        const auto replicas = config_.replicas_for(gpu.index, gpu.model);
        for (std::int64_t k = 1; k <= replicas; ++k) groups[{resource, replicas, k}].push_back(gpu);
      }
    }
    if (!mps_) mps_ = std::make_unique<MpsKeeper>(config_, logger_, mps_changed_);
    mps_->want(std::move(groups), gpu_memory());
    say_compute_modes();
    return judged;
  }

  // A GPU in another compute mode than Default takes one CUDA context at a time
  // (Exclusive_Process, which NVIDIA's MPS daemon sets, and leaves when it is killed), or none
  // (Prohibited): a share's server then fails or waits while another's runs. Said when seen,
  // and when the GPU is in Default again.
  void say_compute_modes() {
    if (!nvml_) return;
    for (const auto& gpu : inventory_.gpus()) {
      const auto mode = nvml_->compute_mode(gpu.bus);
      if (!mode) continue;
      const auto known = compute_modes_.find(gpu.uuid);
      if (known != compute_modes_.end() && known->second == *mode) continue;
      const bool first = known == compute_modes_.end();
      compute_modes_[gpu.uuid] = *mode;
      const std::string which = "GPU " + std::to_string(gpu.index) + " (" + gpu.uuid + ")";
      if (*mode == 0) {
        if (!first) logger_.info(which + " is in compute mode Default again");
        continue;
      }
      logger_.warning(
          which + " is in compute mode " + compute_mode_name(*mode) +
          (*mode == 2 ? ": no CUDA context may be made on it, so its MPS shares run nothing"
                      : ": one MPS server at a time may use it, so containers of another share "
                        "size, or of another user, fail or wait on it (NVIDIA's MPS daemon sets "
                        "this mode, and leaves it when killed)") +
          "; set it back with nvidia-smi -i " + gpu.uuid + " -c DEFAULT");
    }
  }

  // Each GPU's memory as NVML says (asked until it answers), for the MPS daemons' limits;
  // nothing without NVML.
  std::optional<GpuMemory> gpu_memory() {
    if (!nvml_) return std::nullopt;
    for (const auto& gpu : inventory_.gpus()) {
      if (gpu_memory_.count(gpu.uuid) != 0) continue;
      if (const auto mib = nvml_->memory_mib(gpu.bus)) gpu_memory_[gpu.uuid] = *mib;
    }
    return gpu_memory_;
  }

  void refresh() {
    // What happened while it was not watched is looked at once it is.
    if (!watching_ && (watching_ = watch_directory())) {
      logger_.info("watching " + dir_ + " again: kubelet restarts are noticed");
      reconcile(true, {}, kubelet_socket_exists(dir_));
    }
    auto change = inventory_.refresh(nvml_.get());
    bool reset = false;
    if (nvml_) {
      auto resets = inventory_.check_resets(*nvml_);
      reset = !resets.lines.empty();
      change.lines.insert(change.lines.end(), resets.lines.begin(), resets.lines.end());
      change.devices_changed = change.devices_changed || resets.devices_changed;
    }
    // A reset may drop a GPU's event registration: registered again, or its next Xid is lost.
    if (reset && !change.gpus_changed) watch_xids();
    const bool had_nvml = nvml_ != nullptr;
    publish(change);
    // NVML opened on this tick: the topology and the MIG devices are read again with it.
    if (!had_nvml && nvml_) publish(inventory_.use_nvml(*nvml_));
    if (keep_mps()) publish_health();
    keep_labels();
    note_imex_channel();
  }

  // imex-channel: what it gives, said at start and when the channel's node comes or goes.
  void note_imex_channel() {
    auto state = imex_channel_state(config_);
    if (state == imex_state_) return;
    if (state.warning) {
      logger_.warning(state.line);
    } else if (!state.line.empty()) {
      logger_.info(state.line);
    }
    imex_state_ = std::move(state);
  }

  // The labels file follows the inventory: rewritten only when a label changes.
  void keep_labels() {
    const auto unhealthy = inventory_.unhealthy_gpus();
    const auto news =
        labels_.update(LabelSources{inventory_.gpus(), inventory_.migs(), inventory_.topology(),
                                    unhealthy, nvml_.get(), inventory_.mig_modes_known()},
                       Clock::now());
    for (const auto& line : news.info) logger_.info(line);
    for (const auto& line : news.warnings) logger_.warning(line);
  }

  int poll_timeout() const {
    std::optional<Clock::time_point> next;
    for (const auto& [resource, plugin] : plugins_) {
      const auto at = plugin->next_due();
      if (at && (!next || *at < *next)) next = at;
    }
    if (!next) return -1;
    // Rounded up: a timeout rounded down to 0 would poll again and again until the time comes.
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(*next - Clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, left.count()));
  }

  void wait_and_handle(int signals, int ticks) {
    pollfd fds[] = {{signals, POLLIN, 0},
                    {inotify_.get(), POLLIN, 0},
                    {ticks, POLLIN, 0},
                    {xids_ ? xids_->fd() : -1, POLLIN, 0},
                    {registered_.get(), POLLIN, 0},
                    {mps_changed_, POLLIN, 0}};
    const int n = ::poll(fds, 6, poll_timeout());
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
    if ((fds[3].revents & POLLIN) != 0) on_xids();
    if ((fds[4].revents & POLLIN) != 0) {
      drain(registered_.get());
      for (auto& [resource, plugin] : plugins_) plugin->registration_ended();
    }
    if ((fds[5].revents & POLLIN) != 0) {
      drain(mps_changed_);
      publish_health();
    }
    for (auto& [resource, plugin] : plugins_) {
      if (plugin->next_due() && Clock::now() >= *plugin->next_due()) plugin->on_due();
    }
  }

  void on_xids() {
    // The watch polled may have been replaced, or ended, by this pass's tick (new GPUs).
    if (!xids_) return;
    for (auto& item : xids_->take()) {
      if (item.wait_failed) publish(inventory_.apply_xid_wait_failure(*item.wait_failed));
      if (item.wait_works_again) publish(inventory_.apply_xid_wait_failure(std::nullopt));
      if (item.event) publish(inventory_.apply_xid(*item.event));
    }
    keep_labels();
  }

  void on_signal(int signals) {
    signalfd_siginfo info{};
    while (::read(signals, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
      if (info.ssi_signo == SIGHUP) {
        on_hangup();
        continue;
      }
      logger_.info(std::string("stopping on ") +
                   (info.ssi_signo == SIGTERM ? "SIGTERM" : "SIGINT"));
      stopping_ = true;
      changed_config_.reset();
    }
  }

  // SIGHUP, as NVIDIA's plugin: the configuration read again. Changed where the plugin reads
  // it, the plugin stops (its sockets, and its MPS daemons unless they carry over) and starts
  // again with it; else, or unreadable (the running one kept), it serves and registers again.
  // Not once stopping.
  void on_hangup() {
    if (stopping_) return;
    auto fresh = read_config(config_path_);
    if (!fresh) {
      logger_.error("SIGHUP: " + fresh.error().message + "; keeping the configuration in use");
    } else {
      logger_.set_level(fresh->runtime.log_level);
      if (!same_for_plugin(*fresh, config_)) {
        logger_.info("SIGHUP: the configuration changed: stopping, then starting with it");
        changed_config_ = std::move(*fresh);
        return;
      }
    }
    changed_config_.reset();  // a file changed and changed back in one batch of signals
    logger_.info("SIGHUP: serving and registering again");
    for (auto& [resource, plugin] : plugins_) plugin->restart();
  }

  void on_directory_events() {
    alignas(inotify_event) char buf[8192];
    bool kubelet_restarted = false;
    bool directory_gone = false;
    bool kubelet_deleted = false;  // not moved: a kubelet restart unlinks the socket
    std::set<std::string> gone;
    while (true) {
      const ssize_t n = ::read(inotify_.get(), buf, sizeof buf);
      if (n <= 0) break;
      for (char* at = buf; at < buf + n;) {
        const auto* e = reinterpret_cast<const inotify_event*>(at);
        const std::string name = e->len > 0 ? e->name : "";
        if ((e->mask & (IN_CREATE | IN_MOVED_TO)) != 0 && name == kKubeletSocket)
          kubelet_restarted = true;
        if ((e->mask & (IN_DELETE | IN_MOVED_FROM)) != 0) gone.insert(name);
        if ((e->mask & IN_DELETE) != 0 && name == kKubeletSocket) kubelet_deleted = true;
        if ((e->mask & (IN_DELETE_SELF | IN_IGNORED | IN_Q_OVERFLOW)) != 0) directory_gone = true;
        at += sizeof(inotify_event) + e->len;
      }
    }
    if (directory_gone) {
      logger_.warning(dir_ + " was removed or overflowed: watching it again");
      watching_ = watch_directory();
      if (!watching_) logger_.error(watching_.error().message + " (tried again every tick)");
    }
    if (kubelet_deleted) {
      for (auto& [resource, plugin] : plugins_) plugin->kubelet_gone();
    }
    reconcile(directory_gone, gone, kubelet_restarted);
  }

  // After what the directory's events said (`all_gone`: they may have been lost): sockets of
  // ours removed are served again; a kubelet.sock created that is not the one we registered
  // through is a kubelet restart.
  void reconcile(bool all_gone, const std::set<std::string>& gone, bool kubelet_created) {
    if (kubelet_created) {
      const auto kubelet = socket_at(dir_ + "/" + kKubeletSocket);
      kubelet_created = !std::all_of(plugins_.begin(), plugins_.end(), [&](const auto& p) {
        return p.second->registered_through(kubelet);
      });
    }
    if (kubelet_created)
      logger_.info("the kubelet restarted (" + std::string(kKubeletSocket) +
                   " created): registering again");
    for (auto& [resource, plugin] : plugins_) {
      if ((all_gone || gone.count(plugin->socket()) != 0) && !plugin->serving_own_socket()) {
        logger_.info(dir_ + "/" + plugin->socket() + " was removed: serving it again");
        plugin->socket_removed();
      } else if (kubelet_created) {
        plugin->kubelet_restarted();
      }
    }
  }

  const Config& config_;
  std::optional<std::string> config_path_;
  std::optional<Config> changed_config_;
  Logger& logger_;
  NodeHealth health_;
  Inventory inventory_;
  LabelsKeeper labels_;
  std::string dir_;
  Fd inotify_;
  Fd registered_;    // written by each registration that ends
  Status watching_;  // whether dir_ is watched (a kubelet restart noticed), or why not
  std::unique_ptr<Nvml> nvml_;
  std::string nvml_error_;
  Clock::time_point nvml_retry_at_;
  std::unique_ptr<XidWatch> xids_;
  std::map<std::string, std::unique_ptr<ResourcePlugin>> plugins_;
  int mps_changed_;  // written by the MPS keeper when a daemon's health or limits change
  GpuMemory gpu_memory_;
  std::map<std::string, unsigned> compute_modes_;  // by GPU UUID, as last seen
  // sharing = mps: the daemons, by resource, share count and container size.
  std::unique_ptr<MpsKeeper> mps_;
  bool mps_root_ok_ = false;
  std::string mps_refused_;      // why mps-root is refused, "" when it is not
  ImexChannelState imex_state_;  // what imex-channel gives, as last said
  bool stopping_ = false;
};

// The configuration, read again every 10 s while it is broken: a typo is one line in the
// log, not a crash loop.
std::optional<Config> load_config_patiently(const std::optional<std::string>& path, int signals,
                                            Logger& logger) {
  std::string last_error;
  while (true) {
    auto config = read_config(path);
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

// After a plugin stopped for the configuration SIGHUP found `changed`: what to start again
// with, or nullopt when a SIGTERM came meanwhile. A SIGHUP that came meanwhile reads the file
// again, so the newest edit is taken. The labels file `before` named goes if it is not kept.
std::optional<Config> config_to_restart_with(Config changed, const Config& before,
                                             const std::optional<std::string>& path, int signals,
                                             Logger& logger) {
  const auto pending = pending_signals(signals);
  if (pending.terminate) {
    logger.info(std::string("stopping on ") +
                (*pending.terminate == SIGTERM ? "SIGTERM" : "SIGINT") + ", not starting again");
    return std::nullopt;
  }
  if (pending.hangup) {
    auto again = read_config(path);
    if (again) changed = std::move(*again);
    if (!again)
      logger.error("SIGHUP: " + again.error().message + "; starting with the one read before");
  }
  if (changed.device_plugin.labels_file != before.device_plugin.labels_file)
    remove_labels_file(before.device_plugin.labels_file, logger);
  return changed;
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
  const Fd mps_changed(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!mps_changed.valid()) {
    logger.error("eventfd: " + errno_text(errno));
    return 1;
  }
  std::unique_ptr<MpsKeeper> mps;  // daemons serving from one plugin into the next
  auto config = load_config_patiently(options->config_path, signals->get(), logger);
  while (config) {
    logger.set_level(config->runtime.log_level);
    const std::string source = config->source.empty()
                                   ? std::string(kDefaultConfigDir) + "/config.toml (none now)"
                                   : config->source;
    for (const auto& line : nvidia_plugin_env_warnings(environment_variable, source))
      logger.warning(line);
    std::optional<Config> changed;
    int status = 0;
    {
      Plugin plugin(*config, options->config_path, logger, mps_changed.get(), std::move(mps));
      status = plugin.run(signals->get());
      changed = plugin.take_changed_config();
      mps = plugin.take_mps();
    }
    if (!changed) return status;
    const Config before = std::move(*config);
    config = config_to_restart_with(std::move(*changed), before, options->config_path,
                                    signals->get(), logger);
    // Read again meanwhile: the newest file may not keep them.
    if (mps && !(config && mps_daemons_carry_over(before, *config))) mps.reset();
    if (mps)
      logger.info("the MPS control daemons keep serving their clients into the new configuration");
  }
  return 0;
}

}  // namespace gcr
