// gpu-ctk system create-dev-char-symlinks (nvidia-ctk's command too): a /dev/char/<major>:<minor>
// link for every NVIDIA device node, so that systemd keeps them in containers' device rules
// (cgroup v2). The work is in common/devchar.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "base/node_stat.h"
#include "base/text.h"
#include "config/config_file.h"
#include "ctk/ctk.h"
#include "devchar/dev_char.h"
#include "devchar/watch.h"
#include "driver/host.h"

namespace po = boost::program_options;

namespace gcr {
namespace {

constexpr const char* kTool = "gpu-ctk system create-dev-char-symlinks";
constexpr const char* kUsage = "usage: gpu-ctk system create-dev-char-symlinks [options]";

struct DevCharOptions {
  Config::Driver roots;       // dev_root: where the nodes are read
  std::string dev_char_path;  // where the links go
  bool create_all = false;
  bool dry_run = false;
  bool watch = false;
};

void error_line(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", kTool, message.c_str());
}

// The nodes to link: those present, and with --create-all those the driver announces.
std::vector<CharNode> nodes_to_link(const DevCharOptions& options, bool& ok) {
  DriverHost host(options.roots, lstat_node);
  auto nodes = present_nvidia_nodes(host.devices());
  if (!options.create_all) return nodes;
  auto announced = announced_nvidia_nodes(host.devices());
  if (!announced) {
    error_line("--create-all: " + announced.error().message);
    ok = false;
    return nodes;
  }
  return with_announced(std::move(nodes), *announced);
}

// A line per link made or replaced (with --dry-run, per link planned), the errors, a summary.
void report(const DevCharRun& run, bool dry_run) {
  std::size_t changed = 0;
  std::size_t refused = 0;
  for (const auto& link : run.plan) {
    const bool change = link.action == LinkAction::kCreate || link.action == LinkAction::kReplace;
    changed += change ? 1 : 0;
    refused += link.action == LinkAction::kRefuse ? 1 : 0;
    if (dry_run || change) std::printf("%s\n", link_line(run.dir, link, dry_run).c_str());
  }
  for (const auto& error : run.errors) error_line(error);
  if (run.dir.empty()) return;
  if (dry_run) {
    std::printf("%s: %zu NVIDIA device nodes, %zu links to make, %zu in the way\n", run.dir.c_str(),
                run.plan.size(), changed, refused);
  } else {
    const std::size_t failed = run.errors.size() - refused;  // links that could not be written
    std::printf("%s: %zu NVIDIA device nodes, %zu links made, %zu not made\n", run.dir.c_str(),
                run.plan.size(), changed - failed, run.errors.size());
  }
  std::fflush(stdout);
}

// One pass; false when a link could not be made or the driver could not be read.
bool link_nodes(const DevCharOptions& options) {
  bool ok = true;
  const auto nodes = nodes_to_link(options, ok);
  const DevCharRun run = sync_links(nodes, options.dev_char_path, options.dry_run);
  report(run, options.dry_run);
  return ok && run.errors.empty();
}

int create_dev_char_symlinks(const std::vector<std::string>& args) {
  auto config = load_config(config_path_from_env());
  if (!config) {
    error_line(config.error().message);
    return 1;
  }
  DevCharOptions options{config->driver, join_root(config->driver.dev_root, "/dev/char")};
  po::options_description desc(std::string(kUsage) + "\n\noptions");
  desc.add_options()("help,h", "this text")(
      "dev-char-path", po::value(&options.dev_char_path),
      "where the links go (default: /dev/char below [driver] dev-root)")(
      "dev-root", po::value(&options.roots.dev_root),
      "where the nodes are read: its dev/ (default: [driver] dev-root; nvidia-ctk's "
      "--driver-root)")("create-all", po::bool_switch(&options.create_all),
                        "also link the nodes the loaded driver announces but nobody has made "
                        "yet (the links lead nowhere until they are)")(
      "dry-run", po::bool_switch(&options.dry_run), "say what would be done, change nothing")(
      "watch", po::bool_switch(&options.watch),
      "stay, and link new nodes as they appear in dev/ (until SIGTERM, SIGINT or SIGHUP)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    error_line(e.what());
    return 2;
  }
  if (vm.count("help") != 0) {
    std::cout << desc
              << "\nOne link /dev/char/<major>:<minor> -> ../<node> per NVIDIA device node: with "
                 "cgroup v2,\nsystemd rebuilds a container's device rules from these names. A "
                 "correct link is kept,\na wrong one replaced atomically; anything else in the "
                 "way is left alone (exit 1).\n";
    return 0;
  }
  if (options.watch && options.dry_run) {
    error_line("--watch and --dry-run do not go together");
    return 2;
  }
  if (!options.watch) return link_nodes(options) ? 0 : 1;
  const DriverHost host(options.roots, lstat_node);
  auto watched =
      watch_dev_nodes(host.devices().dev_path("/dev"), [&] { (void)link_nodes(options); });
  if (!watched) {
    error_line(watched.error().message);
    return 1;
  }
  return 0;
}

}  // namespace

int ctk_system(const std::vector<std::string>& args) {
  if (!args.empty() && args.front() == "create-dev-char-symlinks")
    return create_dev_char_symlinks({args.begin() + 1, args.end()});
  if (!args.empty() && args.front() == "create-device-nodes") {
    std::fprintf(stderr,
                 "gpu-ctk system: create-device-nodes is not supported: gpu-ctk makes no device "
                 "node: nvidia-modprobe makes them (-c=<minor> for a GPU, -u for nvidia-uvm)\n");
    return 2;
  }
  const bool help = !args.empty() && (args.front() == "--help" || args.front() == "-h");
  if (!help && !args.empty()) {
    std::fprintf(stderr, "gpu-ctk system: unknown command %s (there is create-dev-char-symlinks)\n",
                 quote(args.front(), 64).c_str());
  }
  std::fprintf(help ? stdout : stderr,
               "%s\n\n  create-dev-char-symlinks   /dev/char/<major>:<minor> links for NVIDIA's "
               "device nodes\n",
               "usage: gpu-ctk system <command> [options]");
  return help ? 0 : 2;
}

}  // namespace gcr
