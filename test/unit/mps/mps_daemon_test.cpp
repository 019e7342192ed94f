#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "mps/mps_daemon.h"
#include "test_support.h"

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

TEST_CASE("a limit reads back as the daemon prints it: whole GiB truncated, MiB below a GiB") {
  // Seen from NVIDIA's daemon (535 without a GPU, 580 on an H100).
  CHECK(gcr::mps_memory_reads_as("19G", 20389));
  CHECK(gcr::mps_memory_reads_as("39G", 40779));
  CHECK(gcr::mps_memory_reads_as("1G", 1536));
  CHECK(gcr::mps_memory_reads_as("1000M", 1000));
  CHECK(gcr::mps_memory_reads_as("2G", 2048));
  CHECK(gcr::mps_memory_reads_as("19G\n", 20389));
  // Another limit than ours.
  CHECK_FALSE(gcr::mps_memory_reads_as("20G", 20389));
  CHECK_FALSE(gcr::mps_memory_reads_as("80G", 20389));
  CHECK_FALSE(gcr::mps_memory_reads_as("0G", 1000));
  CHECK_FALSE(gcr::mps_memory_reads_as("999M", 1000));
  CHECK_FALSE(gcr::mps_memory_reads_as("", 1000));
  CHECK_FALSE(gcr::mps_memory_reads_as("G", 0));
  CHECK_FALSE(gcr::mps_memory_reads_as("1X", 1));
  CHECK_FALSE(gcr::mps_memory_reads_as("99999999999999999999999G", 1));
  CHECK(gcr::mps_memory_reads_as("1T", 1048576 + 5));
  CHECK(gcr::mps_memory_reads_as("1.5G", 1536));
  // Every share of NVML's real sizes (H100 80GB HBM3, H200, A100 80GB, L40S, L4) reads back.
  for (const std::uint64_t memory : {81559u, 143771u, 81920u, 46068u, 23034u}) {
    for (std::int64_t n = 2; n <= 48; ++n) {
      for (std::int64_t k = 1; k <= n; ++k) {
        const auto mib = gcr::share_mib(memory, n, k);
        const std::string printed =
            mib >= 1024 ? std::to_string(mib / 1024) + "G" : std::to_string(mib) + "M";
        CAPTURE(printed);
        CHECK(gcr::mps_memory_reads_as(printed, mib));
      }
    }
  }
}

TEST_CASE("the commands that set limits, from the daemon's log") {
  const std::string log =
      "[2026-11-28 08:08:38.726 Control  6038] Starting control daemon using socket /p/control\n"
      "[2026-11-28 08:08:39.732 Control  6038] NEW UI\n"
      "[2026-11-28 08:08:39.733 Control  6038] Cmd:set_default_active_thread_percentage 100\n"
      "[2026-11-28 08:08:39.733 Control  6038] 100.0\n"
      "[2026-11-28 08:08:39.734 Control  6038] Cmd:get_server_list\n"
      "[2026-11-28 08:08:39.735 Control  6038] Cmd:set_device_pinned_mem_limit 4242 0 80G\n"
      "[2026-11-28 08:08:39.736 Control  6038] Cmd:set_default_device_pinned_mem_limit 0 \x1b[1m\n"
      "[2026-11-28 08:08:39.737 Control  6038] Cmd:set_default_active_thread_perc";
  CHECK(gcr::limit_commands_in_log(log) ==
        std::vector<std::string>{"set_default_active_thread_percentage 100",
                                 "set_device_pinned_mem_limit 4242 0 80G",
                                 "set_default_device_pinned_mem_limit 0 \\x1b[1m"});
  CHECK(gcr::limit_commands_in_log("").empty());
  CHECK(gcr::limit_commands_in_log("Cmd:set_x\n").empty());  // not the daemon's line
  CHECK(gcr::limit_commands_in_log("] Cmd:" + std::string(300, 's') + "\n").empty());
  const auto long_one = gcr::limit_commands_in_log("] Cmd:set_" + std::string(300, 'x') + "\n");
  CHECK(long_one.at(0) == "set_" + std::string(196, 'x') + "...");
}

// `tail` stands in for nvidia-cuda-mps-control, whose daemon runs with `-f` (or `-d`) and whose
// clients run with no option, both with the pipe directory in their environment. A client
// comes first in /proc where its pid is lower (pids wrap): the daemon is still the one found.
TEST_CASE("the daemon found for a pipe is the one started as a daemon, not a client of it") {
  const gcr::test::TempDir dir;
  const std::string tail = std::filesystem::canonical("/usr/bin/tail");
  const auto with_pipe = [](const std::string& pipe) {
    gcr::test::RunOptions options;
    options.env["CUDA_MPS_PIPE_DIRECTORY"] = pipe;
    return options;
  };
  // Each one looked for once it runs `tail` (not the test program it was forked from).
  const auto runs_tail = [&](const gcr::test::Daemon& process) {
    const std::string exe = "/proc/" + std::to_string(process.pid()) + "/exe";
    std::error_code ec;
    for (int i = 0; i < 500 && std::filesystem::read_symlink(exe, ec) != tail; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return std::filesystem::read_symlink(exe, ec) == tail;
  };
  const std::string pipe = dir / "pipe";
  gcr::test::Daemon client({tail, "-F", "/dev/null"}, with_pipe(pipe), dir / "client.log");
  gcr::test::Daemon other({tail, "-f", "/dev/null"}, with_pipe(dir / "other"), dir / "other.log");
  REQUIRE(runs_tail(client));
  REQUIRE(runs_tail(other));
  CHECK(gcr::find_mps_daemon(tail, pipe) == -1);
  gcr::test::Daemon daemon({tail, "-f", "/dev/null"}, with_pipe(pipe), dir / "daemon.log");
  REQUIRE(runs_tail(daemon));
  REQUIRE(client.pid() < daemon.pid());
  CHECK(gcr::find_mps_daemon(tail, pipe) == daemon.pid());
  CHECK(gcr::find_mps_daemon(tail, dir / "other") == other.pid());
  CHECK(gcr::find_mps_daemon("/usr/bin/no-such-program", pipe) == -1);
}
