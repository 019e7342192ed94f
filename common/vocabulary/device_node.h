// A device node a container is given: where it is inside the container and on the host, and
// what the device cgroup and CDI's deviceNodes say about it. Driver discovery finds them and
// container edits carry them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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

}  // namespace gcr
