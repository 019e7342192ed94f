#include "edits/edits.h"

namespace gcr {

namespace {

template <class T>
void append_all(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

}  // namespace

void ContainerEdits::append(const ContainerEdits& other) {
  append_all(env, other.env);
  append_all(device_nodes, other.device_nodes);
  append_all(hooks, other.hooks);
  append_all(mounts, other.mounts);
  append_all(additional_gids, other.additional_gids);
  if (other.intel_rdt) intel_rdt = other.intel_rdt;
  append_all(net_devices, other.net_devices);
}

bool ContainerEdits::empty() const {
  return env.empty() && device_nodes.empty() && hooks.empty() && mounts.empty() &&
         additional_gids.empty() && !intel_rdt && net_devices.empty();
}

}  // namespace gcr
