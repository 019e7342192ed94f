#include "deviceplugin/imex.h"

namespace gcr {
namespace {

std::string channel_path() {
  return "/dev/nvidia-caps-imex-channels/channel" + std::to_string(kDefaultImexChannel);
}

}  // namespace

Result<std::vector<unsigned>> imex_channels_to_give(const Config& config, DeviceNodes& nodes) {
  const std::string& mode = config.device_plugin.imex_channel;
  if (mode == "disabled") return std::vector<unsigned>();
  auto node = nodes.imex_channel_node(kDefaultImexChannel);
  if (node) return std::vector<unsigned>{kDefaultImexChannel};
  if (mode == "auto") return std::vector<unsigned>();
  return Error{"IMEX channel " + std::to_string(kDefaultImexChannel) +
               ", which [device-plugin] imex-channel = enabled gives every container with GPUs, "
               "is not on this node: " +
               node.error().message};
}

std::string imex_channel_state(const Config& config, DeviceNodes& nodes) {
  const std::string& mode = config.device_plugin.imex_channel;
  if (mode == "disabled") return "";
  auto node = nodes.imex_channel_node(kDefaultImexChannel);
  if (node) return "containers given GPUs get IMEX channel 0 (" + channel_path() + ")";
  return "IMEX channel 0 is not on this node, so containers given GPUs " +
         (mode == "auto" ? std::string("get none until it is: ")
                         : std::string("are refused until it is (imex-channel = enabled): ")) +
         node.error().message;
}

}  // namespace gcr
