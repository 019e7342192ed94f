// Allocate: what one container gets for the device IDs the kubelet chose, in each form the
// configured device-list strategies name, exactly what gpu-container-runtime reads.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "deviceplugin/devices.h"

namespace gcr {

struct AllocatedMount {
  std::string host;
  std::string container;
  bool read_only = false;
  bool operator==(const AllocatedMount&) const = default;
};

struct ContainerAllocation {
  std::map<std::string, std::string> envs;
  std::vector<AllocatedMount> mounts;  // in order: a mount inside another comes after it
  std::map<std::string, std::string> annotations;
  std::vector<std::string> cdi_devices;
};

// What Allocate knows besides the devices it is asked for.
struct AllocationExtras {
  // The IDs the kubelet said were available when it last asked GetPreferredAllocation for this
  // container (empty: not known); with MPS, a refusal says how many shares each GPU had free
  // then.
  std::vector<std::string> free_when_asked;
  // IMEX channels a container given GPUs also gets (imex.h).
  std::vector<unsigned> imex_channels;
};

// An unknown or unhealthy ID is an error naming it. Replicas of one GPU name it once.
[[nodiscard]] Result<ContainerAllocation> allocate_container(
    const std::vector<std::string>& ids, const std::vector<PluginDevice>& devices,
    const Config& config, const AllocationExtras& extras = {});

}  // namespace gcr
