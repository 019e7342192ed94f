#include "containerd.h"

#include <signal.h>

#include <boost/filesystem.hpp>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "shim_fixture.h"

namespace gcr::test {

namespace fs = boost::filesystem;

Containerd::Containerd(const std::string& dir, const RunOptions& env, const std::string& bin)
    : dir_(dir), bin_(bin), socket_(dir + "/c.sock") {
  if (!exists(bin + "/containerd"))
    throw std::runtime_error("no containerd in " + bin + ": run scripts/install-deps.sh");
  const std::string config = dir + "/config.toml";
  write_file(config, "version = 2\nroot = \"" + dir + "/root\"\nstate = \"" + dir +
                         "/state\"\ndisabled_plugins = [\"io.containerd.grpc.v1.cri\"]\n[grpc]\n  "
                         "address = \"" +
                         socket_ + "\"\n[ttrpc]\n  address = \"" + dir + "/t.sock\"\n");
  start(config, env);
}

Containerd::Containerd(const std::string& dir, const std::string& config, const std::string& socket,
                       const RunOptions& env, const std::string& bin)
    : dir_(dir), bin_(bin), socket_(socket) {
  if (!exists(bin + "/containerd")) throw std::runtime_error("no containerd in " + bin);
  start(config, env);
}

Containerd::~Containerd() {
  daemon_.reset();
  boost::system::error_code ec;
  std::vector<fs::path> task_dirs;
  const fs::path tasks = fs::path(dir_) / "state/io.containerd.runtime.v2.task";
  if (fs::is_directory(tasks, ec)) {
    for (const auto& ns : fs::directory_iterator(tasks, ec)) {
      for (const auto& task : fs::directory_iterator(ns.path(), ec)) task_dirs.push_back(task);
    }
  }
  // The containers: each task's init.pid (a task removed has no folder left).
  for (const auto& task : task_dirs) {
    if (!fs::exists(task / "init.pid", ec)) continue;
    const int pid = std::atoi(read_file((task / "init.pid").string()).c_str());
    if (pid > 1) ::kill(pid, SIGKILL);
  }
  // The shims: the processes started with `-address <this containerd's socket>`.
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::vector<std::string> argv;
    for (std::string arg; std::getline(in, arg, '\0');) argv.push_back(arg);
    for (std::size_t i = 1; i < argv.size(); ++i) {
      if (argv[i - 1] == "-address" && argv[i] == socket_) ::kill(std::stoi(name), SIGKILL);
    }
  }
  // Their sockets, in the machine's /run/containerd/s whatever the state folder: named in each
  // task's `address` (1.7) or `bootstrap.json` (2.x).
  const std::string sockets = "/run/containerd/s/";
  for (const auto& task : task_dirs) {
    for (const char* file : {"address", "bootstrap.json"}) {
      if (!fs::exists(task / file, ec)) continue;
      const std::string text = read_file((task / file).string());
      const auto at = text.find("unix://" + sockets);
      if (at == std::string::npos) continue;
      const auto name = at + std::string("unix://").size() + sockets.size();
      const auto end = text.find_first_not_of("0123456789abcdef", name);
      fs::remove(sockets + text.substr(name, end - name), ec);
    }
  }
}

void Containerd::start(const std::string& config, const RunOptions& env) {
  RunOptions daemon_env = env;
  daemon_env.env["PATH"] = bin_ + ":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  make_dirs(dir_);
  daemon_ =
      std::make_unique<Daemon>(std::vector<std::string>{bin_ + "/containerd", "--config", config},
                               daemon_env, dir_ + "/containerd.log");
  if (!wait_for_path(socket_, 30))
    throw std::runtime_error("containerd did not start: " + read_file(dir_ + "/containerd.log"));
}

std::string Containerd::private_config(std::string stock, const std::string& dir) {
  const std::pair<const char*, const char*> moves[] = {
      {"/var/lib/containerd", "/root"}, {"/run/containerd", "/state"},
      {"/opt/containerd", "/opt"},      {"/var/run/nri", "/nri"},
      {"/etc/nri", "/nri/conf"},        {"/opt/nri", "/nri/plugins"},
      {"/etc/cni/net.d", "/cni"},       {"/etc/cdi", "/cdi"},
      {"/var/run/cdi", "/cdi-run"}};
  const auto replace = [&stock](const std::string& from, const std::string& to) {
    for (auto at = stock.find(from); at != std::string::npos; at = stock.find(from, at + to.size()))
      stock.replace(at, from.size(), to);
  };
  for (const auto& [from, to] : moves) replace(from, dir + to);
  replace("restrict_oom_score_adj = false", "restrict_oom_score_adj = true");
  return stock;
}

ProcessResult Containerd::ctr(const std::vector<std::string>& args,
                              const RunOptions& options) const {
  std::vector<std::string> argv{bin_ + "/ctr", "--address", socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, options);
}

ProcessResult Containerd::ctr_with_cdi_specs(const std::string& specs, const std::string& work,
                                             const std::vector<std::string>& args,
                                             const RunOptions& options) const {
  make_dirs(work + "/upper/cdi");
  make_dirs(work + "/work");
  const std::string script = R"(set -e
specs=$1 work=$2
shift 2
if [ ! -d /etc/cdi ]; then
  mount -t overlay overlay -o "lowerdir=/etc,upperdir=$work/upper,workdir=$work/work" /etc
fi
mount -t tmpfs -o mode=0755 tmpfs /etc/cdi
cp "$specs"/* /etc/cdi/
if [ -d /var/run/cdi ]; then mount -t tmpfs -o mode=0755 tmpfs /var/run/cdi; fi
exec "$@")";
  std::vector<std::string> argv{"/usr/bin/unshare",
                                "--mount",
                                "--propagation",
                                "private",
                                "/bin/sh",
                                "-c",
                                script,
                                "sh",
                                specs,
                                work,
                                bin_ + "/ctr",
                                "--address",
                                socket_};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, options);
}

ProcessResult Containerd::run_through_shim(const std::string& bundle,
                                           const std::vector<std::string>& env,
                                           const std::string& script) const {
  make_busybox_rootfs(bundle);
  std::vector<std::string> args{"run", "--rm", "--runc-binary", built("gpu-container-runtime")};
  for (const auto& var : env) args.insert(args.end(), {"--env", var});
  args.insert(args.end(),
              {"--rootfs", bundle + "/rootfs", "gcr-ctr-test", "/bin/sh", "-c", script});
  return ctr(args);
}

}  // namespace gcr::test
