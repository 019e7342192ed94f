// Files a hostile image may hold to make the loader-cache readers work or allocate: built in
// memory by the tests, small where the attack allows.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace gcr::test {

// A new-format ld.so.cache of `entries` entries (x86-64 flags) whose keys and values all point
// at one string of `length` bytes ("/" then 'a's), after the entry table: the file stays small
// while the entries name entries x length x 2 bytes.
[[nodiscard]] std::string ld_cache_sharing_one_string(std::size_t entries, std::size_t length);

// A minimal x86-64 shared object (one PT_LOAD, a dynamic section) with soname `soname` and
// `needed` DT_NEEDED entries that all name one string of `length` bytes.
[[nodiscard]] std::string elf_with_needed(const std::string& soname, std::size_t needed,
                                          std::size_t length);

// The three images of issue 25 that made one `create` cost gigabytes or seconds, planted in a
// glibc rootfs (whose /usr/lib/x86_64-linux-gnu is the injected folder):
//   cache     a 16 MiB ld.so.cache of about 699,000 entries naming one 4,095-byte string;
//   includes  100 `include /etc/big/*.nomatch` lines over a directory of 20,000 files;
//   needed    64 libraries with 4,093 DT_NEEDED entries naming one 4,000-byte string, the image
//             dated a minute before its cache (so that only the budget declines it).
// Returns the budget line the shim logs for it; throws for an unknown kind.
std::string plant_hostile_image(const std::string& kind, const std::string& rootfs);

// A program's exit, output and cost: `cpu_seconds` its own user and system time (not its
// children's), `max_rss_kb` the peak RSS of it or of any child it waited for, whichever is
// higher (wait4's ru_maxrss).
struct Measured {
  int exit_code = -1;
  std::string out;
  std::string err;
  double cpu_seconds = 0;
  long max_rss_kb = 0;
  long minor_faults = 0;  // page faults served without I/O, the program's and what it executes
};

// Runs argv[0] (a path) with argv[1..], `env` set on top of the test's environment and
// `stdin_text` on its stdin, and measures it.
[[nodiscard]] Measured run_measured(const std::vector<std::string>& argv,
                                    const std::map<std::string, std::string>& env,
                                    const std::string& stdin_text = "");

}  // namespace gcr::test
