// GetPreferredAllocation: the set of `size` devices the plugin would choose, answered from
// memory. The kubelet treats it as advice (a short or empty answer is safe; an error is not).
#pragma once

#include <string>
#include <vector>

#include "config/config.h"
#include "deviceplugin/devices.h"

namespace gcr {

struct PreferredRequest {
  std::vector<std::string> available;
  std::vector<std::string> must_include;
  int size = 0;
};

// Exactly `size` IDs from `available`, every one of `must_include` among them, or nothing when
// that cannot be (must_include outside available or larger than size, too few devices).
[[nodiscard]] std::vector<std::string> preferred_allocation(
    const PreferredRequest& request, const std::vector<PluginDevice>& devices,
    const Config& config);

}  // namespace gcr
