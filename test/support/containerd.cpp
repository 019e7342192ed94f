#include "containerd.h"

#include <memory>
#include <stdexcept>

namespace gcr::test {

Containerd::Containerd(const std::string& dir, const RunOptions& env, const std::string& bin)
    : dir_(dir), bin_(bin), socket_(dir + "/c.sock") {
  if (!exists(bin + "/containerd"))
    throw std::runtime_error("no containerd in " + bin + ": run scripts/install-deps.sh");
  const std::string config = dir + "/config.toml";
  write_file(config, "version = 2\nroot = \"" + dir + "/root\"\nstate = \"" + dir +
                         "/state\"\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  "
                         "address = \"" +
                         socket_ + "\"\n[ttrpc]\n  address = \"" + dir + "/t.sock\"\n");
  RunOptions daemon_env = env;
  daemon_env.env["PATH"] = bin + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  daemon_ =
      std::make_unique<Daemon>(std::vector<std::string>{bin + "/containerd", "--config", config},
                               daemon_env, dir + "/containerd.log");
  if (!wait_for_path(socket_, 30))
    throw std::runtime_error("containerd did not start: " + read_file(dir + "/containerd.log"));
}

ProcessResult Containerd::ctr(const std::vector<std::string>& args,
                              const RunOptions& options) const {
  std::vector<std::string> argv{bin_ + "/ctr", "--address", socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, options);
}

}  // namespace gcr::test
