// What one plan may read from a container image: one GPU `create` in the shim, or one run of the
// update-libraries hook. The image's loader cache, loader configuration, directories and
// libraries may be hostile, and the shim reads them as root outside the pod's limits: every
// reader counts what it is about to read or examine here before it allocates or works on it.
// Over any budget the in-process update declines with an error naming the budget and the file;
// the container still starts, with ldconfig doing the work in its sandbox (memory and CPU
// limited). docs/security.md states the same table.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string_view>

#include "base/result.h"

namespace gcr {

// Bytes read.
inline constexpr std::size_t kBudgetCacheBytes = 16u << 20;         // /etc/ld.so.cache
inline constexpr std::size_t kBudgetConfigurationBytes = 1u << 20;  // ld.so.conf and includes
inline constexpr std::size_t kBudgetLibraryBytes = 32u << 20;       // ELF headers, string tables
inline constexpr std::size_t kBudgetStringTableBytes = 4u << 20;    // one library's names
// Entries examined.
inline constexpr std::size_t kBudgetCacheEntries = 65536;
inline constexpr std::size_t kBudgetCacheStringBytes = 8u << 20;  // the entries' names, paths
inline constexpr std::size_t kBudgetConfigurationLines = 4096;    // directories, includes
inline constexpr std::size_t kBudgetIncludeMatches = 262144;      // names against patterns
inline constexpr std::size_t kBudgetLinksFollowed = 65536;        // library links, each hop
// Directory listings.
inline constexpr std::size_t kBudgetListings = 256;
inline constexpr std::size_t kBudgetListedEntries = 131072;  // in all listings
inline constexpr std::size_t kBudgetListingEntries = 65536;  // one listing: more is an error
// Time: one plan's work, from its budget's making; past it every charge fails, so a plan that
// is slow for any reason is deferred (to ldconfig in its sandbox) at its next read or entry.
// The host's own files (the driver root's cache and configuration) have no deadline.
inline constexpr std::chrono::milliseconds kBudgetTime{1000};
// ELF string lookups (DT_SONAME, DT_NEEDED).
inline constexpr std::size_t kBudgetLookupsPerLibrary = 1024;
inline constexpr std::size_t kBudgetLookups = 65536;

enum class Budget {
  kCacheBytes,
  kConfigurationBytes,
  kLibraryBytes,
  kStringTableBytes,
  kCacheEntries,
  kCacheStringBytes,
  kConfigurationLines,
  kIncludeMatches,
  kLinksFollowed,
  kListings,
  kListedEntries,
  kLookupsPerLibrary,
  kLookups,
};

struct BudgetLimit {
  std::string_view what;  // "loader-cache entries"
  std::size_t limit;
  bool per_plan;  // summed over the plan; otherwise each item (a library, a listing) on its own
};

inline constexpr std::array<BudgetLimit, 13> kImageBudget{{
    {"bytes of loader cache", kBudgetCacheBytes, true},
    {"bytes of loader configuration", kBudgetConfigurationBytes, true},
    {"bytes read from libraries", kBudgetLibraryBytes, true},
    {"bytes of one library's string table", kBudgetStringTableBytes, false},
    {"loader-cache entries", kBudgetCacheEntries, true},
    {"bytes of loader-cache names and paths", kBudgetCacheStringBytes, true},
    {"configuration lines", kBudgetConfigurationLines, true},
    {"names matched against include patterns", kBudgetIncludeMatches, true},
    {"library links followed", kBudgetLinksFollowed, true},
    {"directory listings", kBudgetListings, true},
    {"directory entries listed", kBudgetListedEntries, true},
    {"string lookups in one library", kBudgetLookupsPerLibrary, false},
    {"string lookups in libraries", kBudgetLookups, true},
}};

// What one plan has used. Not thread-safe; one per plan.
class ImageBudget {
 public:
  using Clock = std::chrono::steady_clock;
  ImageBudget() : deadline_(Clock::now() + kBudgetTime) {}
  explicit ImageBudget(Clock::time_point deadline) : deadline_(deadline) {}
  // The counts without the deadline, for the host's own files.
  [[nodiscard]] static ImageBudget untimed() { return ImageBudget(Clock::time_point::max()); }

  // Counts `n` more of `budget` (or, for a per-item budget, an item of size `n`); past the
  // limit, "over the image budget of N <what> (<file>)", and past the deadline "over the image
  // budget of 1000 ms of work (<file>)", which exceeded() keeps.
  [[nodiscard]] Status charge(Budget budget, std::size_t n, std::string_view file);
  // The first budget exceeded; nothing while every budget holds.
  [[nodiscard]] const std::optional<Error>& exceeded() const { return exceeded_; }

 private:
  std::array<std::size_t, kImageBudget.size()> used_{};
  Clock::time_point deadline_;
  std::optional<Error> exceeded_;
};

}  // namespace gcr
