#include "log/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>

#include "base/fs.h"
#include "base/text.h"
#include "json/strict_json.h"

namespace gcr {
namespace {

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "";
}

// RFC 3339 with nanoseconds in UTC, as Go's time.RFC3339Nano prints it.
std::string timestamp() {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now);
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(now - secs).count();
  const std::time_t t = secs.count();
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  // Formatted by hand: strftime reads the time zone files (/etc/localtime) on every call.
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ",
                              tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                              tm.tm_sec, static_cast<long long>(nanos));
  return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
}

void append_line(const std::string& path, const std::string& line) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
               0644));
  if (fd.valid()) (void)write_all(fd.get(), line);
}

std::string json_line(LogLevel level, std::string_view msg, const std::string& time) {
  Json entry = Json::object();
  entry["level"] = level_name(level);
  entry["msg"] = std::string(msg);
  entry["time"] = time;
  return json_text(entry) + "\n";
}

// logrus TextFormatter: time="..." level=error msg="..."
std::string text_line(LogLevel level, std::string_view msg, const std::string& time) {
  const std::string quoted = json_text(Json(std::string(msg)));
  return "time=\"" + time + "\" level=" + level_name(level) + " msg=" + quoted + "\n";
}

}  // namespace

void Logger::set_runc_log(std::optional<std::string> path, std::string format) {
  runc_log_ = std::move(path);
  runc_log_json_ = format == "json";
}

void Logger::log(LogLevel level, std::string_view msg) const {
  if (!enabled(level)) return;
  if (!runc_log_ && log_file_.empty() && !console_) return;
  const std::string time = timestamp();
  if (console_) {
    (void)write_all(STDERR_FILENO,
                    time + " " + level_name(level) + " " + printable(msg, 4096) + "\n");
  }
  if (runc_log_ && !runc_log_->empty()) {
    append_line(*runc_log_,
                runc_log_json_ ? json_line(level, msg, time) : text_line(level, msg, time));
  }
  if (!log_file_.empty()) append_line(log_file_, json_line(level, msg, time));
}

void Logger::error(std::string_view msg) const {
  if (!console_) (void)write_all(STDERR_FILENO, program_ + ": " + printable(msg, 4096) + "\n");
  log(LogLevel::kError, msg);
}

std::optional<LogLevel> parse_log_level(const std::string& name) {
  if (name == "error") return LogLevel::kError;
  if (name == "warning") return LogLevel::kWarning;
  if (name == "info") return LogLevel::kInfo;
  if (name == "debug") return LogLevel::kDebug;
  return std::nullopt;
}

void configure_logger(Logger& logger, LogLevel level, const std::string& log_file,
                      const std::optional<std::string>& runc_log,
                      const std::string& runc_log_format, bool debug) {
  logger.set_level(debug ? LogLevel::kDebug : level);
  logger.set_runc_log(runc_log, runc_log_format);
  logger.set_log_file(log_file);
}

}  // namespace gcr
