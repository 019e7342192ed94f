#include "deviceplugin/imex.h"

#include "base/node_stat.h"
#include "base/text.h"
#include "driver/host.h"
#include "vocabulary/imex_channel.h"

namespace gcr {
namespace {

// The default channel's character device in the dev root, or why it is not there.
Status find_default_channel(const Config& config) {
  DriverHost host(config.driver, lstat_node);  // read now: nothing kept between calls
  auto node = host.devices().imex_channel_device(kDefaultImexChannel);
  if (!node) return node.error();
  return {};
}

}  // namespace

Result<std::vector<unsigned>> imex_channels_to_give(const Config& config) {
  const std::string& mode = config.device_plugin.imex_channel;
  if (mode == "disabled") return std::vector<unsigned>();
  const auto found = find_default_channel(config);
  if (found) return std::vector<unsigned>{kDefaultImexChannel};
  if (mode == "auto") return std::vector<unsigned>();
  return Error{"IMEX channel " + std::to_string(kDefaultImexChannel) +
               ", which [device-plugin] imex-channel = enabled gives every container with GPUs, "
               "is not on this node: " +
               found.error().message};
}

ImexChannelState imex_channel_state(const Config& config) {
  const std::string& mode = config.device_plugin.imex_channel;
  if (mode == "disabled") return {};
  const std::string channel = "IMEX channel " + std::to_string(kDefaultImexChannel);
  const auto found = find_default_channel(config);
  if (found) {
    std::string line = "containers given GPUs get " + channel + " (" + kImexChannelDir + "/" +
                       imex_channel_node_name(kDefaultImexChannel) + ")";
    if (config.device_plugin.hands_out_cdi_names()) {
      const std::string& kind = config.cdi.default_kind;
      line += ", as CDI device " +
              imex_channel_cdi_name(kind.substr(0, kind.find('/')), kDefaultImexChannel) +
              ", which a spec on the node must define (gpu-ctk cdi generate --mode imex; "
              "gpu-cdi-refresh does it when the channel comes)";
    }
    return {line, false};
  }
  if (mode == "auto")
    return {channel + " is not on this node, so containers given GPUs get none until it is: " +
                found.error().message,
            false};
  return {channel +
              " is not on this node, so containers given GPUs are refused until it is "
              "(imex-channel = enabled): " +
              found.error().message,
          true};
}

std::string imex_channel_list(const std::vector<unsigned>& channels) {
  std::vector<std::string> numbers;
  for (unsigned channel : channels) numbers.push_back(std::to_string(channel));
  return join(numbers, ",");
}

}  // namespace gcr
