#include "dockerd.h"

#include <unistd.h>

namespace gcr::test {

Dockerd::Dockerd(const std::string& dir, const std::string& daemon_json, const std::string& bin,
                 const std::string& programs, const std::vector<std::string>& extra)
    : dir_(dir), programs_(programs), socket_(dir + "/d.sock") {
  RunOptions env;
  env.env["PATH"] = bin + ":" + programs + "/bin:" + programs +
                    "/sbin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  std::vector<std::string> argv{programs + "/sbin/dockerd",
                                "--config-file",
                                daemon_json,
                                "--data-root",
                                dir + "/data",
                                "--exec-root",
                                dir + "/exec",
                                "--pidfile",
                                dir + "/pid",
                                "--host",
                                "unix://" + socket_,
                                "--bridge=none",
                                "--iptables=false",
                                "--ip6tables=false",
                                "--ip-masq=false",
                                "--storage-driver=vfs"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  daemon_ = std::make_unique<Daemon>(argv, env, dir + "/dockerd.log");
}

ProcessResult Dockerd::docker(std::vector<std::string> args) const {
  args.insert(args.begin(), {programs_ + "/bin/docker", "-H", "unix://" + socket_});
  return run(args);
}

bool Dockerd::wait_until_serving(const std::string& runtime) const {
  if (!wait_for_path(socket_, 60)) return false;
  for (int i = 0; i < 100; ++i) {
    if (docker({"info", "--format", "{{.DefaultRuntime}}"}).out == runtime + "\n") return true;
    ::usleep(200000);
  }
  return false;
}

std::string Dockerd::log() const {
  return read_file(dir_ + "/dockerd.log");
}

}  // namespace gcr::test
