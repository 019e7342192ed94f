// Whether each GPU still works. A seam: the node checks here (the device node and the
// driver's /proc entry), driver events (Xid) beside them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "driver/device_nodes.h"

namespace gcr {

class HealthSource {
 public:
  virtual ~HealthSource() = default;
  // The GPUs (by UUID) that fail now, each with why.
  [[nodiscard]] virtual std::map<std::string, std::string> failing(
      const std::vector<Gpu>& gpus) = 0;
};

// A GPU fails when its /dev/nvidia<minor> is gone or no longer the character device
// 195:<minor>, or its proc/driver/nvidia/gpus/<bus> entry is gone (it fell off the bus).
class NodeHealth : public HealthSource {
 public:
  explicit NodeHealth(Config::Driver roots) : roots_(std::move(roots)) {}
  std::map<std::string, std::string> failing(const std::vector<Gpu>& gpus) override;

 private:
  Config::Driver roots_;
};

}  // namespace gcr
