#include "deviceplugin/resource_plugin.h"

#include <sys/stat.h>

#include <algorithm>

namespace gcr {
namespace {

constexpr auto kFirstRetry = std::chrono::seconds(1);
constexpr auto kLastRetry = std::chrono::seconds(30);

}  // namespace

bool kubelet_socket_exists(const std::string& dir) {
  struct stat st {};
  return ::lstat((dir + "/" + kKubeletSocket).c_str(), &st) == 0;
}

std::optional<SocketId> socket_at(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return std::nullopt;
  return SocketId{st.st_dev, st.st_ino};
}

ResourcePlugin::ResourcePlugin(std::string resource, const Config& config, Logger& logger,
                               int registered_fd)
    : resource_(std::move(resource)),
      socket_(plugin_socket_name(resource_)),
      dir_(config.device_plugin.kubelet_dir),
      logger_(logger),
      server_(state_, config, logger),
      registered_fd_(registered_fd),
      backoff_(kFirstRetry),
      serve_backoff_(kFirstRetry) {}

void ResourcePlugin::stop() {
  registration_.reset();
  server_.stop();
}

void ResourcePlugin::on_due() {
  next_due_.reset();
  if (std::exchange(pending_serve_, false))
    restart();
  else
    try_register();
}

void ResourcePlugin::restart() {
  registration_.reset();
  last_serve_ = Clock::now();
  if (auto s = server_.start(dir_ + "/" + socket_); !s) {
    logger_.error(s.error().message + "; retrying in " + std::to_string(backoff_.count()) + "s");
    pending_serve_ = true;
    next_due_ = Clock::now() + backoff_;
    backoff_ = std::min(backoff_ * 2, std::chrono::seconds(kLastRetry));
    return;
  }
  served_ = socket_at(dir_ + "/" + socket_);
  logger_.info("serving " + dir_ + "/" + socket_);
  // Served now (SIGHUP, or a removal long after the last serve): a serve or registration
  // retry still due would serve or register a second time.
  pending_serve_ = false;
  next_due_.reset();
  backoff_ = kFirstRetry;
  try_register();
}

bool ResourcePlugin::serving_own_socket() const {
  return served_ && socket_at(dir_ + "/" + socket_) == served_;
}

bool ResourcePlugin::registered_through(const std::optional<SocketId>& kubelet) const {
  const bool ours =
      registered_kubelet_ == kubelet || (registration_ && registering_kubelet_ == kubelet);
  return kubelet && ours && serving_own_socket();
}

void ResourcePlugin::socket_removed() {
  const auto now = Clock::now();
  if (last_serve_ && now - *last_serve_ < serve_backoff_) {
    registration_.reset();  // registered again once served again
    pending_serve_ = true;
    next_due_ = *last_serve_ + serve_backoff_;
    serve_backoff_ = std::min(serve_backoff_ * 2, std::chrono::seconds(kLastRetry));
    return;
  }
  serve_backoff_ = kFirstRetry;
  restart();
}

void ResourcePlugin::try_register() {
  registration_.reset();
  if (!kubelet_socket_exists(dir_)) {
    // Whatever kubelet.sock comes next is a kubelet to register with, even one whose inode
    // number is the last one's (ext4 and xfs hand a freed number out again).
    registered_kubelet_.reset();
    if (!waiting_logged_)
      logger_.info("waiting for the kubelet (no " + dir_ + "/" + kKubeletSocket + ")");
    waiting_logged_ = true;
    return;
  }
  waiting_logged_ = false;
  registered_kubelet_.reset();
  registering_kubelet_ = socket_at(dir_ + "/" + kKubeletSocket);
  registration_ = std::make_unique<Registration>(dir_ + "/" + kKubeletSocket, socket_, resource_,
                                                 registered_fd_);
}

void ResourcePlugin::registration_ended() {
  const auto result = registration_ ? registration_->result() : std::nullopt;
  if (!result) return;
  registration_.reset();
  if (*result) {
    registered_kubelet_ = registering_kubelet_;
    logger_.info("registered with the kubelet as " + resource_ + " (" +
                 std::to_string(state_.snapshot().devices.size()) + " devices)");
    backoff_ = kFirstRetry;
    return;
  }
  if (pending_serve_) return;  // serving again is due: it registers then
  logger_.warning(result->error().message + "; retrying in " + std::to_string(backoff_.count()) +
                  "s");
  next_due_ = Clock::now() + backoff_;
  backoff_ = std::min(backoff_ * 2, std::chrono::seconds(kLastRetry));
}

void ResourcePlugin::kubelet_gone() {
  registration_.reset();
  registered_kubelet_.reset();
}

void ResourcePlugin::kubelet_restarted() {
  backoff_ = kFirstRetry;
  if (pending_serve_) return;  // serving again is due: it registers then
  if (!serving_own_socket()) {
    socket_removed();
    return;
  }
  next_due_.reset();
  try_register();
}

}  // namespace gcr
