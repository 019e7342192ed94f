// A containerd daemon on temporary paths, stopped with the object, and ctr against it: with
// CRI off (ctr needs only the core services), or as a configuration file says (its CRI on).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "test_support.h"

namespace gcr::test {

class Containerd {
 public:
  // Lives under `dir`; `env` is the daemon's environment (GPU_CONTAINER_RUNTIME_CONFIG).
  // `bin` holds containerd, its runc shim and ctr (another release's, unpacked: the daemon finds
  // its shim there first).
  Containerd(const std::string& dir, const RunOptions& env, const std::string& bin = "/usr/bin");
  // As `config` says (a file its own `config default` wrote, moved to private paths by
  // private_config, then configured), serving `socket` (the file's grpc address).
  Containerd(const std::string& dir, const std::string& config, const std::string& socket,
             const RunOptions& env, const std::string& bin);
  // Stops containerd, then kills by pid what is left running (the containers of a test that
  // failed before removing them: each task's state/.../init.pid; their shims: the processes
  // whose -address is this containerd's socket).
  ~Containerd();
  Containerd(const Containerd&) = delete;
  Containerd& operator=(const Containerd&) = delete;

  // The text of a file `containerd config default` wrote with every host path it names for
  // containerd to write (root, state and sockets, the opt and NRI plugins' folders) and the
  // folders it reads CDI specs and CNI configurations from moved under `dir`: root/, state/,
  // opt/, nri/, cni/, cdi/ (for /etc/cdi) and cdi-run/ (for /var/run/cdi); the grpc socket is
  // then state/containerd.sock. And restrict_oom_score_adj = true: a sandbox's OOM score is
  // then never set below containerd's own, which needs CAP_SYS_RESOURCE (not every test
  // machine's root has it).
  [[nodiscard]] static std::string private_config(std::string stock, const std::string& dir);

  [[nodiscard]] ProcessResult ctr(const std::vector<std::string>& args,
                                  const RunOptions& options = {}) const;
  // ctr in a private mount namespace where /etc/cdi is a tmpfs holding copies of the specs in
  // `specs` and /var/run/cdi (where the machine has one) an empty tmpfs: ctr 2.x reads CDI specs
  // from those folders alone, on the client side. Where the machine has no /etc/cdi, an overlay
  // on /etc in that namespace (its upper layer under `work`) makes the folder; the machine's own
  // /etc, /etc/cdi and /var/run/cdi stay as they are.
  [[nodiscard]] ProcessResult ctr_with_cdi_specs(const std::string& specs, const std::string& work,
                                                 const std::vector<std::string>& args,
                                                 const RunOptions& options = {}) const;
  // ctr run of `script` (sh -c) through our shim (--runc-binary), in a busybox rootfs made in
  // `bundle`, with `env` (NAME=VALUE).
  [[nodiscard]] ProcessResult run_through_shim(const std::string& bundle,
                                               const std::vector<std::string>& env,
                                               const std::string& script) const;
  [[nodiscard]] const std::string& socket() const { return socket_; }

 private:
  std::string dir_;
  std::string bin_;
  std::string socket_;
  std::unique_ptr<Daemon> daemon_;

  void start(const std::string& config, const RunOptions& env);
};

}  // namespace gcr::test
