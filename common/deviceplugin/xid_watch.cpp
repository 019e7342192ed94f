#include "deviceplugin/xid_watch.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

namespace gcr {
namespace {

constexpr unsigned kWaitMs = 500;  // how soon a stop is noticed
constexpr auto kFirstBackoff = std::chrono::seconds(1);
constexpr auto kLastBackoff = std::chrono::seconds(30);

}  // namespace

bool is_ignored_xid(unsigned long long xid, const std::vector<std::int64_t>& extra) {
  for (const unsigned long long ignored : {13ULL, 31ULL, 43ULL, 45ULL, 68ULL, 109ULL}) {
    if (xid == ignored) return true;
  }
  return std::any_of(extra.begin(), extra.end(),
                     [&](std::int64_t x) { return static_cast<unsigned long long>(x) == xid; });
}

Result<std::unique_ptr<XidWatch>> XidWatch::start(Nvml& nvml, const std::vector<PciAddress>& gpus) {
  auto unwatched = nvml.watch_xids(gpus);
  if (!unwatched) return unwatched.error();
  Fd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake.valid()) return Error{"eventfd: " + errno_text(errno)};
  std::unique_ptr<XidWatch> watch(new XidWatch(nvml, std::move(wake)));
  watch->unwatched_ = std::move(*unwatched);
  watch->thread_ = std::thread([w = watch.get()] { w->run(); });
  return watch;
}

XidWatch::~XidWatch() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void XidWatch::push(XidNews item) {
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(item));
  }
  const std::uint64_t one = 1;
  (void)!::write(wake_.get(), &one, sizeof one);
}

std::vector<XidNews> XidWatch::take() {
  std::uint64_t count = 0;
  (void)!::read(wake_.get(), &count, sizeof count);
  const std::lock_guard lock(mutex_);
  return std::exchange(queue_, {});
}

void XidWatch::run() {
  auto backoff = std::chrono::duration_cast<std::chrono::milliseconds>(kFirstBackoff);
  bool failing = false;
  while (!stopping_) {
    auto event = nvml_.wait_xid(kWaitMs);
    if (!event) {
      failing = true;
      push(XidNews{std::nullopt, event.error().message, false});
      for (auto slept = std::chrono::milliseconds(0); slept < backoff && !stopping_;
           slept += std::chrono::milliseconds(100))
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      backoff = std::min(backoff * 2,
                         std::chrono::duration_cast<std::chrono::milliseconds>(kLastBackoff));
      continue;
    }
    backoff = std::chrono::duration_cast<std::chrono::milliseconds>(kFirstBackoff);
    if (failing) push(XidNews{std::nullopt, std::nullopt, true});
    failing = false;
    if (*event) push(XidNews{**event, std::nullopt, false});
  }
}

}  // namespace gcr
