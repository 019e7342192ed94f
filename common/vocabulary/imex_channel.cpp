#include "vocabulary/imex_channel.h"

#include <limits>

#include "base/text.h"

namespace gcr {
namespace {

constexpr std::string_view kNodePrefix = "channel";

}  // namespace

std::string imex_channel_node_name(unsigned channel) {
  return std::string(kNodePrefix) + std::to_string(channel);
}

std::optional<unsigned> imex_channel_of_node_name(std::string_view name) {
  if (!name.starts_with(kNodePrefix)) return std::nullopt;
  const std::string_view suffix = name.substr(kNodePrefix.size());
  const auto number = parse_decimal(suffix);
  if (!number || *number > std::numeric_limits<unsigned>::max() ||
      std::to_string(*number) != suffix)
    return std::nullopt;
  return static_cast<unsigned>(*number);
}

std::string imex_channel_cdi_name(std::string_view vendor, unsigned channel) {
  return std::string(vendor) + "/" + kImexChannelClass + "=" + std::to_string(channel);
}

}  // namespace gcr
