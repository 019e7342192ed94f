// Container edits, shaped like CDI's containerEdits: the one structure both the live
// driver discovery and CDI specs produce, applied to a spec by apply_edits().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "json/strict_json.h"
#include "vocabulary/device_node.h"

namespace gcr {

struct Mount {
  std::string host_path;
  std::string container_path;
  std::string type;
  std::vector<std::string> options;
};

struct Hook {
  std::string
      hook_name;  // prestart, createRuntime, createContainer, startContainer, poststart, poststop
  std::string path;
  std::vector<std::string> args;
  std::vector<std::string> env;
  std::optional<int> timeout;
};

struct NetDevice {
  std::string host_interface_name;
  std::string name;
};

struct ContainerEdits {
  std::vector<std::string> env;
  std::vector<DeviceNode> device_nodes;
  std::vector<Hook> hooks;
  std::vector<Mount> mounts;
  std::vector<std::uint32_t> additional_gids;
  std::optional<Json> intel_rdt;  // already in OCI linux.intelRdt shape
  std::vector<NetDevice> net_devices;

  // Concatenates every list; intelRdt: the last one set wins.
  void append(const ContainerEdits& other);
  [[nodiscard]] bool empty() const;
};

}  // namespace gcr
