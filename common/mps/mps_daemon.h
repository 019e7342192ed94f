// NVIDIA's MPS control daemon (nvidia-cuda-mps-control) for the GPUs of one advertised
// resource: started by gpu-device-plugin with an explicit environment, told each GPU's
// per-client defaults through its control pipe and asked them back, watched, and stopped.
// The limits are the server's defaults: a client can lower its own, not raise them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/fs.h"
#include "base/result.h"
#include "driver/host.h"

namespace gcr {

struct MpsGpu {
  std::string uuid;
  std::optional<std::uint64_t> pinned_mib;  // each client's device memory; none: not limited
};

// A link in the daemon's driver/bin or driver/lib directory: a name its servers are run or
// loaded by, leading to the driver root's file. The control daemon runs nvidia-cuda-mps-server
// from its PATH, and the server loads libcuda.so.1: with the driver elsewhere than the host's
// own directories (a driver container's /run/nvidia/driver, /usr/local/nvidia), neither is
// where the host's PATH and loader look.
struct MpsDriverLink {
  bool library = false;  // in driver/lib (else driver/bin)
  std::string name;      // "nvidia-cuda-mps-server", "libcuda.so.1"
  std::string target;    // host path
};

struct MpsPlan {
  std::string program;  // host path of nvidia-cuda-mps-control
  std::string root;     // [device-plugin] mps-root
  // mps_dir() of root: pipe/ (CUDA_MPS_PIPE_DIRECTORY), log/, shm/ (the daemon's /dev/shm and
  // its clients'), and driver/bin and driver/lib (first in its PATH, its LD_LIBRARY_PATH).
  std::string dir;
  unsigned thread_percentage = 100;  // each client's active threads
  std::vector<MpsGpu> gpus;
  std::vector<MpsDriverLink> driver;

  [[nodiscard]] std::string pipe_dir() const { return dir + "/pipe"; }
  [[nodiscard]] std::string log_dir() const { return dir + "/log"; }
  [[nodiscard]] std::string shm_dir() const { return dir + "/shm"; }
  [[nodiscard]] std::string bin_dir() const { return dir + "/driver/bin"; }
  [[nodiscard]] std::string lib_dir() const { return dir + "/driver/lib"; }
};

// `shares` of a GPU of `memory_mib` split `replicas` ways: their threads (at least 1 %) and
// their pinned memory.
[[nodiscard]] unsigned share_percentage(std::int64_t replicas, std::int64_t shares);
[[nodiscard]] std::uint64_t share_mib(std::uint64_t memory_mib, std::int64_t replicas,
                                      std::int64_t shares);

// The control client's answers: "25.0" -> 25.0; "2G", "2048M" -> 2048.
[[nodiscard]] std::optional<double> parse_mps_percentage(std::string_view text);
[[nodiscard]] std::optional<std::uint64_t> parse_mps_memory_mib(std::string_view text);
// Whether `answer` to get_default_device_pinned_mem_limit is how the daemon prints a limit of
// `mib`: it keeps the limit to the MiB but prints whole GiB (TiB) truncated from a GiB (TiB) on,
// so 20389M reads back as "19G", 1000M as "1000M". Another limit in the same printed GiB is not
// told apart.
[[nodiscard]] bool mps_memory_reads_as(std::string_view answer, std::uint64_t mib);

// <mps-root, cleaned>/<resource with '/' as '-'>/<shares>-of-<replicas>: where the daemon for
// containers of `shares` of a resource's GPUs of `replicas` shares keeps its directories (one
// daemon per share count and container size, as a daemon's limits hold for all its clients).
[[nodiscard]] std::string mps_dir(const std::string& mps_root, const std::string& resource,
                                  std::int64_t replicas, std::int64_t shares);

// Whether gpu-device-plugin may make, empty and chmod the daemons' directories under `mps_root`
// ([device-plugin] mps-root): TrustCheck::work_directory (base/trust.h), the path judged as the
// configuration file's is, and mps-root itself (or, while it is missing, the nearest directory
// above it) owned by root and not writable by group or others, sticky or not. The error is the
// line users see: "`device-plugin.mps-root` refused: writable by group or others (/tmp/ww)".
// `also_owner`: a user trusted as root is (0 but in tests).
[[nodiscard]] Status check_mps_root(const std::string& mps_root, uid_t also_owner = 0);

// The daemon's directories made ready (check_mps_root first), each below mps-root made or
// opened without following a symlink (O_DIRECTORY|O_NOFOLLOW) and judged by its fstat:
// <resource>/ and <k>-of-<n>/, which we make directories in, and the daemon's log/ and pipe/,
// owned by root and not writable by group or others; shm/ owned by root, then opened to every
// client (fchmod 1777); driver/, driver/bin and driver/lib as log/, holding plan.driver's links
// and nothing else (each link replaced by a rename: a running daemon never misses one). Returns
// pipe/, open: it is emptied through the fd (unlinkat).
[[nodiscard]] Result<Fd> make_mps_dirs(const MpsPlan& plan, uid_t also_owner = 0);

// The host path of the driver root's nvidia-cuda-mps-control, where the driver has one.
[[nodiscard]] std::optional<std::string> mps_control_program(DriverHost& host);
// What the daemon's servers need from the driver root: its nvidia-cuda-mps-server, and its
// compute and utility libraries by soname. An error when the driver has no server.
[[nodiscard]] Result<std::vector<MpsDriverLink>> mps_driver_links(DriverHost& host);

// One command to the daemon listening in `pipe_dir`, through NVIDIA's control client `program`;
// its answer without the trailing newline.
[[nodiscard]] Result<std::string> ask_mps(const std::string& program, const std::string& pipe_dir,
                                          const std::string& command);

// The pid of the control daemon `program` (its resolved path) serving `pipe_dir`, one an earlier
// plugin or an operator started: a process of that executable started as the daemon (`-d` or
// `-f`), its environment naming that pipe; not a control client (no option), which has both.
// -1 when none is found.
[[nodiscard]] pid_t find_mps_daemon(const std::string& program, const std::string& pipe_dir);

// The commands that change limits ("set_default_active_thread_percentage 100",
// "set_device_pinned_mem_limit 4242 0 80G") in a piece of the daemon's control.log, which
// records every command it is sent as "[time Control pid] Cmd:<command>", in order; each made
// printable and cut to 200 characters. A line cut short at the piece's end is not read.
[[nodiscard]] std::vector<std::string> limit_commands_in_log(std::string_view log);

// What a running daemon says of itself, for gpu-ctk info and doctor.
struct MpsState {
  std::optional<double> thread_percentage;  // each client's default
  // By ordinal, each client's pinned-memory limit as the daemon prints it ("19G"; "": none).
  std::vector<std::string> pinned;
  unsigned servers = 0;
  unsigned clients = 0;
};
[[nodiscard]] Result<MpsState> read_mps_state(const std::string& program,
                                              const std::string& pipe_dir, std::size_t gpus);

class MpsDaemon {
 public:
  explicit MpsDaemon(MpsPlan plan);
  ~MpsDaemon();
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // Starts the daemon in a private mount namespace with shm/ as its /dev/shm, or adopts one a
  // killed plugin left answering on the pipe (its clients keep running), then sets the thread
  // percentage and each GPU's pinned-memory limit, and reads both back.
  [[nodiscard]] Status start();
  // The same GPUs with other pinned-memory limits (NVML came to tell the memory): set and read
  // back, the daemon and its clients left running.
  [[nodiscard]] Status update_limits(std::vector<MpsGpu> gpus);
  // Whether it is still running (a cheap wait on the child) and, with `ask_it`, answering its
  // pipe: an error says why not.
  [[nodiscard]] Status check(bool ask_it);
  // Whether clients' work runs on it: it is still running, with a child process running (each
  // MPS server is). A daemon a killed plugin left is found by its executable and the pipe its
  // environment names.
  [[nodiscard]] bool runs_servers();
  // Whether a client changed its limits since the last look (a pod that can reach the control
  // socket can send the daemon any command; NVIDIA's daemon before 580 takes `set_*` from any
  // user, and every version from root): reads what the daemon logged since (its standard output,
  // log/control.log), and after a command that sets a limit to another value than ours sets the
  // defaults and every server's limits back. The commands it undid ("" when none, also after
  // setting everything back because more was logged than it reads); an error when they cannot be
  // set back.
  // Commands read but not yet set back (the daemon did not answer) are set back on a later call.
  [[nodiscard]] Result<std::string> restore_changed_limits();
  // Asks it to quit, kills it after 5 s, and empties the pipe directory.
  void stop();
  // One command through the control client; its answer without the trailing newline.
  [[nodiscard]] Result<std::string> ask(const std::string& command) const;

  // Whether it is a daemon a killed plugin left that was started with another environment than
  // this one gives it (an earlier version's, without the driver links: a server it starts fails
  // where the driver is not in the host's own directories).
  [[nodiscard]] bool outdated() const { return outdated_; }

  [[nodiscard]] const MpsPlan& plan() const { return plan_; }
  [[nodiscard]] pid_t pid() const { return child_; }

 private:
  Status spawn();
  Status wait_until_answering();
  Status set_limits();
  Status restore_servers();
  [[nodiscard]] bool sets_our_limit(const std::string& command) const;
  // The commands changing its limits it logged since the last look, joined ("" where more was
  // logged than is read, or the log was emptied: set everything back); none when nothing.
  std::optional<std::string> limit_changes_logged();
  // Opens the daemon's log, skipping what it holds.
  void skip_control_log();
  void reap(bool wait);
  void clear_pipe_dir() const;

  MpsPlan plan_;
  Fd pipe_;         // pipe/, open since start()
  Fd control_log_;  // log/control.log, the daemon's standard output
  off_t control_log_seen_ = 0;
  std::vector<std::string> env_;
  std::optional<std::string> owed_;  // limit changes read but not yet set back
  pid_t child_ = -1;
  bool adopted_ = false;      // running, but not our child (an earlier plugin started it)
  pid_t adopted_pid_ = -1;    // an adopted daemon's, where /proc showed it
  bool outdated_ = false;     // adopted, its environment not the one this plugin gives
  std::string program_path_;  // plan_.program resolved, as /proc/<pid>/exe shows it
};

}  // namespace gcr
