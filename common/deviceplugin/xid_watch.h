// Critical Xid events, waited for in a thread of its own (NVML's wait blocks) and handed to
// the daemon's loop through a queue and an eventfd the loop polls. A failing wait is reported
// and retried with backoff, never in a tight loop.
#pragma once

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/fs.h"
#include "base/result.h"
#include "driver/nvml.h"

namespace gcr {

// What the watch saw: an event, the wait failing (`wait_failed`), or the wait answering again
// after it failed (`wait_works_again`).
struct XidNews {
  std::optional<XidEvent> event;
  std::optional<std::string> wait_failed;
  bool wait_works_again = false;
};

class XidWatch {
 public:
  // Starts watching `gpus`, all those NVML can watch; the error says why none can be.
  [[nodiscard]] static Result<std::unique_ptr<XidWatch>> start(Nvml& nvml,
                                                               const std::vector<PciAddress>& gpus);
  ~XidWatch();
  XidWatch(const XidWatch&) = delete;
  XidWatch& operator=(const XidWatch&) = delete;

  // Readable when something is queued.
  [[nodiscard]] int fd() const { return wake_.get(); }
  // Everything queued, in order.
  [[nodiscard]] std::vector<XidNews> take();
  // The GPUs left out, "<bus> (NVML error <n>)": their health comes from their nodes alone.
  [[nodiscard]] const std::vector<std::string>& unwatched() const { return unwatched_; }

 private:
  XidWatch(Nvml& nvml, Fd wake) : nvml_(nvml), wake_(std::move(wake)) {}
  void run();
  void push(XidNews item);

  Nvml& nvml_;
  Fd wake_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::vector<XidNews> queue_;
  std::vector<std::string> unwatched_;
  std::thread thread_;
};

// NVIDIA's application-level Xids (a fault of the program, not the GPU): 13, 31, 43, 45, 68,
// 109, plus `extra`.
[[nodiscard]] bool is_ignored_xid(unsigned long long xid, const std::vector<std::int64_t>& extra);

}  // namespace gcr
