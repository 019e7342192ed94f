#include <doctest/doctest.h>

#include "mps/mps_daemon.h"

TEST_CASE("k shares: k/replicas of the threads (at least 1 %, at most 100) and of the memory") {
  CHECK(gcr::share_percentage(4, 1) == 25);
  CHECK(gcr::share_percentage(3, 1) == 33);
  CHECK(gcr::share_percentage(1000, 1) == 1);
  CHECK(gcr::share_mib(40960, 4, 1) == 10240);
  CHECK(gcr::share_mib(32768, 3, 1) == 10922);
  CHECK(gcr::share_percentage(3, 2) == 66);
  CHECK(gcr::share_percentage(8, 3) == 37);
  CHECK(gcr::share_percentage(4, 4) == 100);
  CHECK(gcr::share_percentage(4, 9) == 100);  // never more than the GPU
  CHECK(gcr::share_mib(32768, 3, 2) == 21845);
  CHECK(gcr::share_mib(32768, 3, 3) == 32768);
  CHECK(gcr::share_mib(~std::uint64_t{0}, 48, 47) == ~std::uint64_t{0} / 48 * 47 + 47 * 15 / 48);
  CHECK(gcr::mps_dir("/run/mps", "example.com/gpu", 8, 3) == "/run/mps/example.com-gpu/3-of-8");
}

TEST_CASE("the control client's answers, as nvidia-cuda-mps-control prints them") {
  CHECK(gcr::parse_mps_percentage("25.0") == 25.0);
  CHECK(gcr::parse_mps_percentage("100.0\n") == 100.0);
  CHECK(gcr::parse_mps_percentage("") == std::nullopt);
  CHECK(gcr::parse_mps_percentage("101") == std::nullopt);
  CHECK(gcr::parse_mps_percentage("25%") == std::nullopt);
  CHECK(gcr::parse_mps_memory_mib("2G") == 2048u);
  CHECK(gcr::parse_mps_memory_mib("10240M") == 10240u);
  CHECK(gcr::parse_mps_memory_mib("1T") == 1048576u);
  CHECK(gcr::parse_mps_memory_mib("1.5G") == 1536u);
  CHECK(gcr::parse_mps_memory_mib("") == std::nullopt);  // no limit set
  CHECK(gcr::parse_mps_memory_mib("2") == std::nullopt);
  CHECK(gcr::parse_mps_memory_mib("2X") == std::nullopt);
  CHECK(gcr::parse_mps_memory_mib("-1G") == std::nullopt);
  // strtod's other forms, found by the fuzzer: not what the client prints.
  CHECK(gcr::parse_mps_memory_mib("5555555555E2G") == std::nullopt);
  CHECK(gcr::parse_mps_memory_mib("0x10M") == std::nullopt);
  CHECK(gcr::parse_mps_memory_mib("1.2.3M") == std::nullopt);
  CHECK(gcr::parse_mps_memory_mib("99999999999999T") == std::nullopt);
  CHECK(gcr::parse_mps_percentage("2e1") == std::nullopt);
}
