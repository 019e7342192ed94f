#include <doctest/doctest.h>

#include "vocabulary/imex_channel.h"

using gcr::imex_channel_cdi_name;
using gcr::imex_channel_node_name;
using gcr::imex_channel_of_node_name;

TEST_CASE("IMEX channel node names: channel<N> in canonical decimal, round trip") {
  CHECK(imex_channel_node_name(0) == "channel0");
  CHECK(imex_channel_node_name(2047) == "channel2047");
  CHECK(*imex_channel_of_node_name("channel0") == 0);
  CHECK(*imex_channel_of_node_name("channel2047") == 2047);
  CHECK(*imex_channel_of_node_name("channel4294967295") == 4294967295U);
  for (const char* name :
       {"channel", "channel01", "channel+1", "channel-1", "channel 1", "channel1x", "Channel1",
        "chan1", "1", "channel4294967296", "channel99999999999999999999"}) {
    CAPTURE(name);
    CHECK_FALSE(imex_channel_of_node_name(name).has_value());
  }
}

TEST_CASE("IMEX channel CDI names: <vendor>/imex-channel=<channel>") {
  CHECK(imex_channel_cdi_name("nvidia.com", 0) == "nvidia.com/imex-channel=0");
  CHECK(imex_channel_cdi_name("example.com", 12) == "example.com/imex-channel=12");
}
