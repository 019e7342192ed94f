// gpu-ctk hook <name> [flags]: the createContainer hooks the runtime injects (update-libraries,
// disable-device-node-modification, update-application-profile) and those that NVIDIA's specs
// and earlier versions name (update-ldcache, create-symlinks, enable-cuda-compat, chmod).
// The OCI state arrives on stdin. Unknown hook names and flags are warnings (exit 0) so specs
// written by newer versions keep working; real failures exit 1 with one line on stderr.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <map>

#include "config/config.h"
#include "ctk/ctk.h"
#include "hooks/app_profile.h"
#include "hooks/chmod_paths.h"
#include "hooks/container_hooks.h"
#include "hooks/cuda_compat.h"
#include "hooks/driver_params.h"
#include "hooks/libraries_request.h"
#include "ldcache/image_budget.h"
#include "oci/container_state.h"
#include "oci/spec_io.h"

namespace po = boost::program_options;

namespace gcr {
namespace {

void warn(const std::string& msg) {
  std::fprintf(stderr, "gpu-ctk hook: warning: %s\n", msg.c_str());
}

int fail(const std::string& name, const std::string& msg) {
  std::fprintf(stderr, "gpu-ctk hook %s: %s\n", name.c_str(), msg.c_str());
  return 1;
}

// `--name=` as Boost reads it: a known flag's empty value apart, an unknown one left out with a
// warning (Boost refuses an empty value before it looks whether it knows the flag).
std::vector<std::string> with_empty_values_apart(const std::vector<std::string>& args,
                                                 const po::options_description& desc) {
  std::vector<std::string> out;
  for (const auto& arg : args) {
    if (arg.size() < 4 || !arg.starts_with("--") || arg.find('=') != arg.size() - 1) {
      out.push_back(arg);
      continue;
    }
    const std::string name = arg.substr(2, arg.size() - 3);
    if (desc.find_nothrow(name, false) == nullptr) {
      warn("ignoring unknown argument `" + arg + "`");
      continue;
    }
    out.push_back("--" + name);
    out.emplace_back();
  }
  return out;
}

// The last of a flag given twice, as NVIDIA's command-line library keeps it (Boost refuses a
// second value); flags that gather their values keep all.
void keep_last_values(po::parsed_options& parsed) {
  auto& options = parsed.options;
  std::map<std::string, std::size_t> last;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (!options[i].unregistered) last[options[i].string_key] = i;
  }
  std::vector<po::option> kept;
  for (std::size_t i = 0; i < options.size(); ++i) {
    const auto& o = options[i];
    const auto* known =
        o.unregistered ? nullptr : parsed.description->find_nothrow(o.string_key, false);
    if (known != nullptr && !known->semantic()->is_composing() && last[o.string_key] != i) continue;
    kept.push_back(o);
  }
  options = std::move(kept);
}

// Reads `args` into the values `desc` names; unknown arguments are warnings.
Status parse_options(const std::vector<std::string>& args, const po::options_description& desc) {
  try {
    po::variables_map vm;
    auto parsed = po::command_line_parser(with_empty_values_apart(args, desc))
                      .options(desc)
                      .allow_unregistered()
                      .run();
    for (const auto& unknown : po::collect_unrecognized(parsed.options, po::include_positional)) {
      warn("ignoring unknown argument `" + unknown + "`");
    }
    keep_last_values(parsed);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return Error{e.what()};
  }
  return {};
}

Result<LibrariesRequest> parse_flags(const std::vector<std::string>& args) {
  LibrariesRequest flags;
  flags.ldconfig = Config::Hooks{}.ldconfig;  // the configuration's default
  po::options_description desc;
  desc.add_options()("folder", po::value(&flags.folders)->composing())(
      "link", po::value(&flags.links)->composing())("ldconfig-path", po::value(&flags.ldconfig));
  if (auto s = parse_options(args, desc); !s) return s.error();
  return flags;
}

// enable-cuda-compat's flags, NVIDIA's names: the host's driver and CUDA versions, and the
// image's compat folder (--cuda-compat-container-root).
struct CompatFlags {
  HostDriver host;
  std::string dir = Config::Requests{}.cuda_compat_dir;
};

Result<CompatFlags> parse_compat_flags(const std::vector<std::string>& args) {
  CompatFlags flags;
  std::string cuda;
  po::options_description desc;
  desc.add_options()("host-driver-version", po::value(&flags.host.version))(
      "host-cuda-version", po::value(&cuda))("cuda-compat-container-root", po::value(&flags.dir));
  if (auto s = parse_options(args, desc); !s) return s.error();
  if (!cuda.empty()) flags.host.cuda = cuda;
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
      "       gpu-ctk hook update-libraries [--folder DIR]... [--ldconfig-path @PATH]\n"
      "                                     [--link TARGET::LINK]...\n"
      "       gpu-ctk hook enable-cuda-compat --host-driver-version VERSION\n"
      "                                       [--host-cuda-version VERSION]\n"
      "                                       [--cuda-compat-container-root DIR]\n"
      "       gpu-ctk hook disable-device-node-modification\n"
      "       gpu-ctk hook update-application-profile\n"
      "       gpu-ctk hook chmod --mode MODE --path PATH [--path PATH]...\n"
      "update-libraries does both in one process: the links, then the loader cache.\n"
      "enable-cuda-compat names the image's CUDA forward-compatibility folder (default\n"
      "/usr/local/cuda/compat) in /etc/ld.so.conf.d/00-compat-gpu-container-runtime.conf when\n"
      "its libcuda is newer than the host's driver, for the loader-cache hook after it.\n"
      "disable-device-node-modification mounts a copy of the container's\n"
      "/proc/driver/nvidia/params saying ModifyDeviceFiles: 0 over it.\n"
      "update-application-profile writes an application profile that limits the driver's EGL\n"
      "to the container's GPUs (the spec's /dev/nvidia<N> nodes) into\n"
      "/etc/nvidia/nvidia-application-profiles-rc.d/10-container.conf.\n"
      "chmod (NVIDIA's, deprecated) sets the octal MODE on each PATH in the container that\n"
      "exists, no symlink followed.\n"
      "The OCI container state is read from stdin.\n");
}

bool is_library_hook(const std::string& name) {
  return name == "update-ldcache" || name == "create-symlinks" || name == "update-libraries";
}

// An image over its budget gets ldconfig, which is said (runc shows a hook's stderr only when
// the hook fails; run by hand, it is there).
Status run_hook(const std::string& name, const RootFs& root, const LibrariesRequest& flags) {
  if (name != "update-ldcache") {
    if (auto s = create_symlinks(root, flags.links); !s || name == "create-symlinks") return s;
  }
  ImageBudget budget;
  const Status done =
      update_ldcache(root, flags.folders, flags.ldconfig, budget,
                     name == "update-libraries" ? flags.links : std::vector<std::string>{});
  if (const auto& over = budget.exceeded())
    warn("the loader cache is left to ldconfig: " + over->message);
  return done;
}

// The drop-in names the compat folder when it goes first, and is removed otherwise. An image
// that cannot be read as expected is said, and nothing is done: the container starts.
Status enable_cuda_compat(const RootFs& root, const CompatFlags& flags) {
  if (flags.host.version.empty() && !flags.host.cuda)
    return write_cuda_compat_drop_in(root, std::nullopt);
  ImageBudget budget;
  auto compat = find_cuda_compat(root, flags.dir, flags.host, budget);
  if (!compat) warn("CUDA forward compatibility: nothing done: " + compat.error().message);
  return write_cuda_compat_drop_in(root, compat ? compat->folder : std::nullopt);
}

int library_hook(const std::string& name, const std::vector<std::string>& args) {
  auto flags = parse_flags(args);
  if (!flags) return fail(name, flags.error().message);
  auto root = open_container_root();
  if (!root) return fail(name, root.error().message);
  const Status done = run_hook(name, *root, *flags);
  return done ? 0 : fail(name, done.error().message);
}

int params_hook(const std::string& name, const std::vector<std::string>& args) {
  if (auto s = parse_options(args, po::options_description()); !s)
    return fail(name, s.error().message);
  auto root = open_container_root();
  if (!root) return fail(name, root.error().message);
  auto covered = disable_device_node_modification(*root);
  return covered ? 0 : fail(name, covered.error().message);
}

int compat_hook(const std::string& name, const std::vector<std::string>& args) {
  auto flags = parse_compat_flags(args);
  if (!flags) return fail(name, flags.error().message);
  auto root = open_container_root();
  if (!root) return fail(name, root.error().message);
  const Status done = enable_cuda_compat(*root, *flags);
  return done ? 0 : fail(name, done.error().message);
}

// The GPUs are those the bundle's spec gives the container: runc makes exactly those nodes. A
// profile that cannot be written (a volume or a file where it goes) is said, and the container
// starts without one, as the shim does at create.
int app_profile_hook(const std::string& name, const std::vector<std::string>& args) {
  if (auto s = parse_options(args, po::options_description()); !s)
    return fail(name, s.error().message);
  auto state = read_container_state_from_stdin();
  if (!state) return fail(name, state.error().message);
  auto bundle = read_bundle_spec(state->bundle);
  if (!bundle) return fail(name, bundle.error().message);
  auto rootfs = container_rootfs(*state, *bundle);
  if (!rootfs) return fail(name, rootfs.error().message);
  auto root = RootFs::open(*rootfs);
  if (!root) return fail(name, root.error().message);
  if (auto written = write_app_profile(*root, visible_gpu_mask(bundle->spec)); !written)
    warn("application profile: nothing done: " + written.error().message);
  return 0;
}

// NVIDIA's chmod: a path the container lacks is skipped, as NVIDIA's hook skips it.
int chmod_hook(const std::string& name, const std::vector<std::string>& args) {
  std::string mode_text;
  std::vector<std::string> paths;
  po::options_description desc;
  desc.add_options()("mode", po::value(&mode_text))("path", po::value(&paths)->composing());
  if (auto s = parse_options(args, desc); !s) return fail(name, s.error().message);
  auto mode = parse_chmod_mode(mode_text);
  if (!mode) return fail(name, mode.error().message);
  auto root = open_container_root();
  if (!root) return fail(name, root.error().message);
  const Status done = chmod_in_root(*root, paths, *mode);
  return done ? 0 : fail(name, done.error().message);
}

}  // namespace

int ctk_hook(const std::vector<std::string>& args) {
  if (args.empty() || asks_for_help(args)) {
    print_usage();
    return args.empty() ? 2 : 0;
  }
  const std::string name = args.front();
  const std::vector<std::string> flags(args.begin() + 1, args.end());
  if (is_library_hook(name)) return library_hook(name, flags);
  if (name == "enable-cuda-compat") return compat_hook(name, flags);
  if (name == "disable-device-node-modification") return params_hook(name, flags);
  if (name == "update-application-profile") return app_profile_hook(name, flags);
  if (name == "chmod") return chmod_hook(name, flags);
  warn("unknown hook `" + name + "`: nothing done");
  return 0;
}

}  // namespace gcr
