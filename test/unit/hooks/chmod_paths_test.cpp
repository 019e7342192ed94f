// NVIDIA's chmod hook: its --mode.
#include <doctest/doctest.h>

#include "hooks/chmod_paths.h"

TEST_CASE("chmod's --mode: octal digits up to 07777, nothing else") {
  CHECK(gcr::parse_chmod_mode("755").value() == 0755);
  CHECK(gcr::parse_chmod_mode("0").value() == 0);
  CHECK(gcr::parse_chmod_mode("07777").value() == 07777);
  for (const std::string bad : {"", "8", "10000", "077777", "-1", "0x1ff", "u+x", " 755"}) {
    CAPTURE(bad);
    CHECK_FALSE(gcr::parse_chmod_mode(bad).ok());
  }
}
