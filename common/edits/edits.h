// Container edits, shaped like CDI's containerEdits: the one structure both the live
// driver discovery and CDI specs produce, applied to a spec by apply_edits().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "json/strict_json.h"

namespace gcr {

struct DeviceNode {
  std::string path;       // inside the container
  std::string host_path;  // "" means the same as path
  std::string type;       // "", "c", "b", "u" or "p"
  std::optional<std::int64_t> major;
  std::optional<std::int64_t> minor;
  std::optional<std::uint32_t> file_mode;
  std::string permissions;  // subset of "rwm"; "" means "rwm"; "none" means no access
  std::optional<std::uint32_t> uid;
  std::optional<std::uint32_t> gid;
};

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
