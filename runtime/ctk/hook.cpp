// gpu-ctk hook <name> [flags]: the createContainer hooks the runtime injects. The OCI state
// arrives on stdin. Unknown hook names and flags are warnings (exit 0) so specs written by
// newer versions keep working; real failures exit 1 with one line on stderr.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>

#include "ctk/ctk.h"
#include "hooks/container_hooks.h"
#include "oci/container_state.h"

namespace po = boost::program_options;

namespace gcr {
namespace {

struct HookFlags {
  std::vector<std::string> folders;
  std::vector<std::string> links;
  std::string ldconfig = "@/sbin/ldconfig";
};

void warn(const std::string& msg) {
  std::fprintf(stderr, "gpu-ctk hook: warning: %s\n", msg.c_str());
}

int fail(const std::string& name, const std::string& msg) {
  std::fprintf(stderr, "gpu-ctk hook %s: %s\n", name.c_str(), msg.c_str());
  return 1;
}

Result<HookFlags> parse_flags(const std::vector<std::string>& args) {
  HookFlags flags;
  po::options_description desc;
  desc.add_options()("folder", po::value(&flags.folders)->composing())(
      "link", po::value(&flags.links)->composing())("ldconfig-path", po::value(&flags.ldconfig));
  try {
    po::variables_map vm;
    const auto parsed = po::command_line_parser(args).options(desc).allow_unregistered().run();
    for (const auto& unknown : po::collect_unrecognized(parsed.options, po::include_positional)) {
      warn("ignoring unknown argument `" + unknown + "`");
    }
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Error{e.what()};
  }
  return flags;
}

Result<RootFs> open_container_root() {
  auto state = read_container_state_from_stdin();
  if (!state) return state.error();
  auto rootfs = container_rootfs(*state);
  if (!rootfs) return rootfs.error();
  return RootFs::open(*rootfs);
}

bool asks_for_help(const std::vector<std::string>& args) {
  return std::any_of(args.begin(), args.end(),
                     [](const std::string& arg) { return arg == "--help" || arg == "-h"; });
}

void print_usage() {
  std::printf(
      "usage: gpu-ctk hook update-ldcache [--folder DIR]... [--ldconfig-path @PATH]\n"
      "       gpu-ctk hook create-symlinks [--link TARGET::LINK]...\n"
      "The OCI container state is read from stdin.\n");
}

}  // namespace

int ctk_hook(const std::vector<std::string>& args) {
  if (args.empty() || asks_for_help(args)) {
    print_usage();
    return args.empty() ? 2 : 0;
  }
  const std::string name = args.front();
  if (name != "update-ldcache" && name != "create-symlinks") {
    warn("unknown hook `" + name + "`: nothing done");
    return 0;
  }
  auto flags = parse_flags(std::vector<std::string>(args.begin() + 1, args.end()));
  if (!flags) return fail(name, flags.error().message);
  auto root = open_container_root();
  if (!root) return fail(name, root.error().message);
  const Status done = name == "update-ldcache"
                          ? update_ldcache(*root, flags->folders, flags->ldconfig)
                          : create_symlinks(*root, flags->links);
  return done ? 0 : fail(name, done.error().message);
}

}  // namespace gcr
