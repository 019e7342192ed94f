// The time of a log line as RFC 3339 in UTC with nanoseconds, as Go's time.RFC3339Nano prints
// it for runc and containerd: computed from the clock alone (the C library's gmtime_r reads
// /etc/localtime on its first call, strftime on every call).
#pragma once

#include <chrono>
#include <string>

namespace gcr {

// "2026-11-28T19:12:55.000000123Z"; nanoseconds always nine digits.
[[nodiscard]] std::string rfc3339_utc(std::chrono::system_clock::time_point when);

}  // namespace gcr
