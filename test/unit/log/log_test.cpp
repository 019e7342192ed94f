#include <doctest/doctest.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "log/log.h"
#include "log/timestamp.h"
#include "test_support.h"

namespace {

std::chrono::system_clock::time_point at(long long seconds, long long nanos = 0) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(seconds) + std::chrono::nanoseconds(nanos)));
}

int lines_in(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

}  // namespace

TEST_CASE("log times are RFC 3339 in UTC with nine digits of nanoseconds") {
  CHECK(gcr::rfc3339_utc(at(0)) == "1970-01-01T00:00:00.000000000Z");
  CHECK(gcr::rfc3339_utc(at(951782400, 5)) == "2000-02-29T00:00:00.000000005Z");  // leap day
  CHECK(gcr::rfc3339_utc(at(1709251199, 999999999)) == "2024-02-29T23:59:59.999999999Z");
  CHECK(gcr::rfc3339_utc(at(1709251200)) == "2024-03-01T00:00:00.000000000Z");
  CHECK(gcr::rfc3339_utc(at(4107542400)) == "2100-03-01T00:00:00.000000000Z");  // no leap day
  CHECK(gcr::rfc3339_utc(at(1795892095, 123456789)) == "2026-11-28T18:54:55.123456789Z");
}

TEST_CASE("a logger that keeps its sinks open writes every line to the file it first opened") {
  gcr::test::TempDir dir;
  gcr::Logger logger("test");
  logger.set_level(gcr::LogLevel::kDebug);
  logger.set_log_file(dir / "log");
  logger.set_runc_log(dir / "runc.log", "json");
  logger.set_runc_log_debug(true);  // runc's --debug: every message, not only warnings and errors
  logger.keep_sinks_open();
  logger.debug("one");
  REQUIRE(::rename((dir / "log").c_str(), (dir / "log.1").c_str()) == 0);
  logger.info("two");
  CHECK(lines_in(gcr::test::read_file(dir / "log.1")) == 2);
  CHECK_FALSE(gcr::test::exists(dir / "log"));
  CHECK(lines_in(gcr::test::read_file(dir / "runc.log")) == 2);
  CHECK(gcr::test::read_file(dir / "runc.log").find("\"msg\":\"two\"") != std::string::npos);
  // A new file name opens the new file.
  logger.set_log_file(dir / "other");
  logger.info("three");
  CHECK(lines_in(gcr::test::read_file(dir / "other")) == 1);
}

TEST_CASE("a daemon's logger opens its file for each line, so a rotated log is followed") {
  gcr::test::TempDir dir;
  gcr::Logger logger("test");
  logger.set_log_file(dir / "log");
  logger.info("one");
  REQUIRE(::rename((dir / "log").c_str(), (dir / "log.1").c_str()) == 0);
  logger.info("two");
  logger.debug("below the level");
  CHECK(lines_in(gcr::test::read_file(dir / "log.1")) == 1);
  CHECK(lines_in(gcr::test::read_file(dir / "log")) == 1);
}

TEST_CASE("a kept log file never takes the place of a closed stdin, stdout or stderr") {
  gcr::test::TempDir dir;
  const int saved = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
  REQUIRE(saved >= 3);
  ::close(STDIN_FILENO);
  gcr::Logger logger("test");
  logger.set_log_file(dir / "log");
  logger.keep_sinks_open();
  logger.info("one");
  const bool stdin_still_closed = ::fcntl(STDIN_FILENO, F_GETFD) == -1;
  REQUIRE(::dup2(saved, STDIN_FILENO) == STDIN_FILENO);
  ::close(saved);
  CHECK(stdin_still_closed);
  logger.info("two");
  CHECK(lines_in(gcr::test::read_file(dir / "log")) == 2);
}
