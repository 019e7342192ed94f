#include "doctor/dev_char_checks.h"

#include <unistd.h>

#include "base/node_stat.h"
#include "devchar/dev_char.h"
#include "driver/host.h"

namespace gcr {
namespace {

constexpr const char* kArea = "driver";
constexpr std::size_t kNamed = 3;  // nodes named in the line; the rest are counted

// "195:0 for /dev/nvidia0, 195:255 for /dev/nvidiactl and 2 more"
std::string named_nodes(const std::vector<CharNode>& nodes) {
  std::string out;
  for (std::size_t i = 0; i < nodes.size() && i < kNamed; ++i) {
    if (i > 0) out += ", ";
    out += dev_char_name(nodes[i]) + " for " + nodes[i].path;
  }
  if (nodes.size() > kNamed) out += " and " + std::to_string(nodes.size() - kNamed) + " more";
  return out;
}

}  // namespace

void check_dev_char(const Config& config, Findings& findings) {
  DriverHost host(config.driver, lstat_node);
  if (::access(host.devices().dev_path("/sys/fs/cgroup/cgroup.controllers").c_str(), F_OK) != 0)
    return;
  const auto nodes = present_nvidia_nodes(host.devices());
  if (nodes.empty()) return;
  const std::string dir = host.devices().dev_path("/dev/char");
  const auto unlinked = unlinked_nodes(nodes, dir, stat_node);
  if (unlinked.empty()) {
    findings.ok(kArea,
                "cgroup v2: the " + std::to_string(nodes.size()) +
                    " NVIDIA device nodes have their /dev/char links",
                dir);
    return;
  }
  findings.fail(kArea,
                "cgroup v2: " + std::to_string(unlinked.size()) + " of the " +
                    std::to_string(nodes.size()) + " NVIDIA device nodes have no /dev/char link (" +
                    named_nodes(unlinked) +
                    "): with systemd, `systemctl daemon-reload` takes them from running "
                    "containers",
                dir,
                "gpu-ctk system create-dev-char-symlinks, then restart the GPU containers "
                "started before (the packages' udev rule makes the links when the driver loads)");
}

}  // namespace gcr
