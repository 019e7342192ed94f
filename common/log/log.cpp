#include "log/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>

#include "base/fs.h"
#include "base/text.h"
#include "json/strict_json.h"
#include "log/timestamp.h"

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

// Opened above stderr: a program started with fd 0, 1 or 2 closed would otherwise get its log
// file there, and the lines it writes to stdout or stderr would land in the log.
Fd open_sink(const std::string& path) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY,
               0644));
  if (!fd.valid() || fd.get() > STDERR_FILENO) return fd;
  return Fd(::fcntl(fd.get(), F_DUPFD_CLOEXEC, STDERR_FILENO + 1));
}

// `line` appended to `path`, through `kept` when the sink stays open (opened there if not yet).
void append_line(const std::string& path, const std::string& line, Fd& kept, bool keep_open) {
  if (!keep_open) {
    const Fd fd = open_sink(path);
    if (fd.valid()) (void)write_all(fd.get(), line);
    return;
  }
  if (!kept.valid()) kept = open_sink(path);
  if (kept.valid()) (void)write_all(kept.get(), line);
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
  runc_log_fd_ = Fd();
}

void Logger::set_log_file(std::string path) {
  log_file_ = std::move(path);
  log_file_fd_ = Fd();
}

void Logger::log(LogLevel level, std::string_view msg) const {
  if (!enabled(level)) return;
  if (!runc_log_ && log_file_.empty() && !console_) return;
  const std::string time = rfc3339_utc(std::chrono::system_clock::now());
  if (console_) {
    (void)write_all(STDERR_FILENO,
                    time + " " + level_name(level) + " " + printable(msg, 4096) + "\n");
  }
  if (runc_log_ && !runc_log_->empty() && (level <= LogLevel::kWarning || runc_log_debug_)) {
    append_line(*runc_log_,
                runc_log_json_ ? json_line(level, msg, time) : text_line(level, msg, time),
                runc_log_fd_, keep_open_);
  }
  if (!log_file_.empty())
    append_line(log_file_, json_line(level, msg, time), log_file_fd_, keep_open_);
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
  logger.set_runc_log_debug(debug);
  logger.set_log_file(log_file);
}

}  // namespace gcr
