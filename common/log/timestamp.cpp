#include "log/timestamp.h"

#include <cstdio>

namespace gcr {

std::string rfc3339_utc(std::chrono::system_clock::time_point when) {
  using namespace std::chrono;
  const auto day = floor<days>(when);
  const year_month_day date{day};
  const hh_mm_ss clock{floor<nanoseconds>(when - day)};
  char buf[64];
  const int n = std::snprintf(
      buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02d.%09lldZ", static_cast<int>(date.year()),
      static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
      static_cast<int>(clock.hours().count()), static_cast<int>(clock.minutes().count()),
      static_cast<int>(clock.seconds().count()),
      static_cast<long long>(clock.subseconds().count()));
  return std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
}

}  // namespace gcr
