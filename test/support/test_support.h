// Helpers for tests: temporary directories, files, and running programs.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gcr::test {

// Whether this program is built with AddressSanitizer: GCC says so with __SANITIZE_ADDRESS__,
// clang 14 only through __has_feature.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
inline constexpr bool kSanitized = __has_feature(address_sanitizer);
#else
inline constexpr bool kSanitized = false;
#endif

// The UUID the driver's information file gives a GPU it has not initialised yet (spelt so that
// no `??-` trigraph sequence is in the source).
inline const std::string kUninitialisedUuid =
    "GPU-" + std::string(8, '?') + "-" + std::string(4, '?') + "-" + std::string(4, '?') + "-" +
    std::string(4, '?') + "-" + std::string(12, '?');

// A directory under $TMPDIR (or /tmp) removed with its contents when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string operator/(const std::string& rel) const { return path_ + "/" + rel; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const std::string& content, mode_t mode = 0644);
[[nodiscard]] std::string read_file(const std::string& path);
[[nodiscard]] bool exists(const std::string& path);
void make_dirs(const std::string& path);
void make_symlink(const std::string& target, const std::string& link);

struct ProcessResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

struct RunOptions {
  std::map<std::string, std::string> env;  // set on top of the test's environment
  std::vector<std::string> unset_env;      // removed from it
  std::optional<std::string> cwd;
  std::optional<std::string> stdin_text;
  std::optional<std::string> stdin_path;  // a file (or device) to read stdin from instead
};

// Runs argv[0] (a path) with argv[1..] and waits for it.
[[nodiscard]] ProcessResult run(const std::vector<std::string>& argv,
                                const RunOptions& options = {});

// A program built by this project (gpu-container-runtime, gpu-ctk, fake-runc): in the build
// tree, else beside the running program.
[[nodiscard]] std::string built(const std::string& name);
// A file under the source tree's test/ directory.
[[nodiscard]] std::string test_source(const std::string& rel);

[[nodiscard]] bool is_root();
// Throws `why` (failing the calling test) unless this runs as root.
void require_root(const char* why = "the simulated GPU host needs root (mknod)");

// The built gpu-ctk with `args`.
[[nodiscard]] ProcessResult ctk(const std::vector<std::string>& args);

[[nodiscard]] bool contains(const std::vector<std::string>& list, const std::string& item);

// A background program (an engine daemon) stopped with SIGTERM, then SIGKILL, when the
// object dies. Its output goes to `log`.
class Daemon {
 public:
  Daemon(const std::vector<std::string>& argv, const RunOptions& options, const std::string& log);
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  [[nodiscard]] bool running();
  [[nodiscard]] int pid() const { return pid_; }
  // SIGTERM, then waits (10 s at most, then SIGKILL): the exit status, or -1 after a signal.
  int stop();
  // SIGKILL, as the OOM killer or `kill -9` ends it, and waits: nothing of its own clean-up runs.
  void kill();

 private:
  int pid_ = -1;
};

// A unix socket bound at `path` and listened on, whose connections nobody accepts or answers
// (a daemon that hangs); closed when the object dies.
class ListeningSocket {
 public:
  explicit ListeningSocket(const std::string& path);
  ~ListeningSocket();
  ListeningSocket(const ListeningSocket&) = delete;
  ListeningSocket& operator=(const ListeningSocket&) = delete;

 private:
  int fd_ = -1;
};

// A connection of `type` (SOCK_STREAM, SOCK_SEQPACKET) to the unix socket at `path` that sends
// nothing (a client that holds a daemon); closed when the object dies.
class UnixClient {
 public:
  UnixClient(const std::string& path, int type);
  ~UnixClient();
  UnixClient(const UnixClient&) = delete;
  UnixClient& operator=(const UnixClient&) = delete;

 private:
  int fd_ = -1;
};

// Waits until `path` exists (a socket the daemon creates); false after `seconds`.
[[nodiscard]] bool wait_for_path(const std::string& path, int seconds);

// User and system seconds the process `pid` has used, all its threads but not its children
// (fields 14 and 15 of /proc/<pid>/stat); also of one exited and not yet reaped.
[[nodiscard]] double cpu_seconds(pid_t pid);

// Lazily unmounts every mount point at or below `dir` (what engines leave behind).
void unmount_below(const std::string& dir);

}  // namespace gcr::test
