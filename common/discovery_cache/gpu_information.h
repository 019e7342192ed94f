// What a GPU's /proc/driver/nvidia/gpus/<bus>/information file says, kept between calls in
// `[runtime] state-dir`/discovery beside the driver files (issue 44): reading the file asks
// the driver about the GPU (about 0.2 ms on a real H200, per GPU read), checking its stamp is
// one lstat. The kept text is used only while the file has the stamp it had when read (device,
// inode, owner, mode, size and times). procfs makes a new inode, with the time it made it,
// whenever the driver makes the entry again (the driver reloaded, the GPU bound again), so the
// text is used only for the entry it was read from, whose fields (model, UUID, bus, minor) the
// driver fixes when it binds the GPU. Nothing is kept whose stamp is less than 2 s old.
#pragma once

#include <ctime>
#include <functional>
#include <string>

#include "discovery_cache/stamped_file.h"
#include "driver/device_nodes.h"

namespace gcr {

class KeptGpuInformation : public GpuInformationStore {
 public:
  // Kept in `state_dir`/discovery; an empty `state_dir` keeps nothing. `now`: the real time.
  explicit KeptGpuInformation(std::string state_dir, std::function<timespec()> now = realtime_now)
      : state_dir_(std::move(state_dir)), now_(std::move(now)) {}

  [[nodiscard]] Result<std::string> read(
      const std::string& path, const std::function<Result<std::string>()>& read_live) override;

 private:
  std::string state_dir_;
  std::function<timespec()> now_;
};

}  // namespace gcr
