// Logging: the one failure line on stderr, runc's --log file in runc's own format (so
// containerd and docker show our message), and the optional [runtime] log-file (JSON lines).
// Sinks are opened on first use (O_APPEND|O_NOFOLLOW|O_CLOEXEC); nothing is opened when
// nothing is logged, which keeps pass-through calls free of log work. A short-lived program
// keeps them open for its next lines; a daemon opens them for each line, so a log rotated by
// renaming is followed.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include "base/fs.h"

namespace gcr {

enum class LogLevel { kError = 0, kWarning = 1, kInfo = 2, kDebug = 3 };

// "error", "warning", "info", "debug".
[[nodiscard]] std::optional<LogLevel> parse_log_level(const std::string& name);

class Logger {
 public:
  explicit Logger(std::string program) : program_(std::move(program)) {}

  void set_level(LogLevel level) { level_ = level; }
  // runc's --log: `format` is "json" or anything else for logrus-style text. It takes warnings
  // and errors (what engines read there), every message at or above the level with `debug`
  // (runc's --debug): a line of ours before runc's error is one a reader may not expect.
  void set_runc_log(std::optional<std::string> path, std::string format);
  void set_runc_log_debug(bool on) { runc_log_debug_ = on; }
  void set_log_file(std::string path);
  // Sinks stay open from their first line to the program's end (or exec: they are O_CLOEXEC).
  void keep_sinks_open() { keep_open_ = true; }
  // A daemon's log: every message at or above the level on stderr, one line each,
  // "<RFC 3339 time> <level> <msg>" (journald and kubectl logs keep stderr).
  void set_console(bool on) { console_ = on; }

  void debug(std::string_view msg) const { log(LogLevel::kDebug, msg); }
  void info(std::string_view msg) const { log(LogLevel::kInfo, msg); }
  void warning(std::string_view msg) const { log(LogLevel::kWarning, msg); }
  // The failure line: stderr as "<program>: <msg>", plus every sink.
  void error(std::string_view msg) const;

  [[nodiscard]] bool enabled(LogLevel level) const { return level <= level_; }

 private:
  void log(LogLevel level, std::string_view msg) const;

  std::string program_;
  std::atomic<LogLevel> level_{LogLevel::kInfo};  // a daemon sets it while its threads log
  std::optional<std::string> runc_log_;
  bool runc_log_json_ = false;
  bool runc_log_debug_ = false;
  std::string log_file_;
  bool console_ = false;
  bool keep_open_ = false;
  mutable Fd runc_log_fd_;  // open while keep_open_
  mutable Fd log_file_fd_;
};

// Logger settings from the configuration ([runtime] log-level, log-file) and runc's global
// flags (--log, --log-format, --debug).
void configure_logger(Logger& logger, LogLevel level, const std::string& log_file,
                      const std::optional<std::string>& runc_log,
                      const std::string& runc_log_format, bool debug);

}  // namespace gcr
