// gpu-ctk cdi generate | list | validate | resolve | transform root
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "base/fs.h"
#include "base/node_stat.h"
#include "base/text.h"
#include "cdi/generate.h"
#include "cdi/registry.h"
#include "cdi/transform.h"
#include "cdi/yaml.h"
#include "config/config_file.h"
#include "ctk/ctk.h"
#include "edits/edits_json.h"
#include "vocabulary/cdi_name.h"
#include "vocabulary/imex_channel.h"

namespace po = boost::program_options;

namespace gcr {
namespace {

int fail(const std::string& msg) {
  std::fprintf(stderr, "gpu-ctk cdi: %s\n", msg.c_str());
  return 1;
}

// Parses `args` into `vm`; nullopt when parsing succeeded and the command should go on.
std::optional<int> parse(const std::vector<std::string>& args, po::options_description& desc,
                         const po::positional_options_description& positional,
                         po::variables_map& vm, const char* usage) {
  desc.add_options()("help,h", "this text");
  try {
    po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "gpu-ctk cdi: %s\n", e.what());
    return 2;
  }
  if (vm.count("help") != 0) {
    std::cout << usage << "\n" << desc;
    return 0;
  }
  return std::nullopt;
}

// --spec-dir, repeatable: given, it replaces [cdi] spec-dirs (already in `dirs`).
void add_spec_dir_option(po::options_description& desc, std::vector<std::string>& dirs) {
  desc.add_options()("spec-dir", po::value(&dirs)->composing(),
                     "spec directory (repeatable; default: [cdi] spec-dirs)");
}

// The spec directory is created when missing (/etc/cdi is not there on a fresh host).
Status write_output(const std::string& path, const std::string& text) {
  if (auto s = make_directories(dirname_of(path)); !s) return s.error();
  auto dirfd = open_directory(dirname_of(path));
  if (!dirfd) return dirfd.error();
  auto s = write_file_atomic_at(dirfd->get(), basename_of(path), text, FileOwner{0644});
  if (!s) return s.error().wrap("cannot write " + path);
  return {};
}

// --format and --output together: the format from the name where none is given (yaml without
// one); engines read only .json and .yaml files, so, as NVIDIA's tools do, a .yml name becomes
// .yaml and the format's extension is added to any other.
Status settle_output(std::string& output, std::string& format) {
  if (format.empty()) format = output.ends_with(".json") ? "json" : "yaml";
  if (format != "json" && format != "yaml") return Error{"--format must be json or yaml"};
  if (output.ends_with(".yml")) output.replace(output.size() - 4, 4, ".yaml");
  if (!output.empty() && !output.ends_with(".json") && !output.ends_with(".yaml"))
    output += "." + format;
  return {};
}

// The spec on stdout, or written to `output` with a line on stderr.
int put_spec(const CdiSpec& spec, const std::string& output, const std::string& format) {
  const Json doc = cdi_spec_to_json(spec);
  const std::string text = format == "json" ? json_text(doc, 2) + "\n" : json_to_yaml(doc);
  if (output.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  if (auto s = write_output(output, text); !s) return fail(s.error().message);
  std::fprintf(stderr, "gpu-ctk cdi: wrote %s (%zu devices, cdiVersion %s)\n", output.c_str(),
               spec.devices.size(), spec.version.c_str());
  return 0;
}

// --device-name-strategy values, each once, comma lists split.
Result<CdiNaming> naming_of(const std::vector<std::string>& given, bool no_all_device) {
  CdiNaming naming;
  naming.all_device = !no_all_device;
  if (given.empty()) return naming;
  naming.strategies.clear();
  for (const auto& value : given) {
    for (auto part : split(value, ',')) {
      const std::string strategy(trim(part));
      if (!is_cdi_name_strategy(strategy))
        return Error{"--device-name-strategy `" + printable(strategy, 64) +
                     "` is not index, uuid or type-index"};
      if (std::find(naming.strategies.begin(), naming.strategies.end(), strategy) ==
          naming.strategies.end())
        naming.strategies.push_back(strategy);
    }
  }
  return naming;
}

// The spec `mode` asks for: the GPUs' (auto, nvml), the management spec, whose vendor is
// management.nvidia.com unless one is given, or the IMEX channels' (class imex-channel unless
// one is given).
Result<CdiSpec> spec_of_mode(const std::string& mode, DriverHost& host, const Config& config,
                             const std::string& vendor, const std::string& device_class,
                             const CdiNaming& naming) {
  const std::string gpu_class = device_class.empty() ? "gpu" : device_class;
  if (mode == "auto" || mode == "nvml")
    return generate_cdi_spec(host, config,
                             (vendor.empty() ? "nvidia.com" : vendor) + "/" + gpu_class, naming);
  if (mode == "management")
    return generate_management_spec(
        host, config, (vendor.empty() ? std::string(kManagementVendor) : vendor) + "/" + gpu_class);
  if (mode == "imex")
    return generate_imex_spec(
        host, (vendor.empty() ? "nvidia.com" : vendor) + "/" +
                  (device_class.empty() ? std::string(kImexChannelClass) : device_class));
  return Error{"--mode " + printable(mode, 64) + " is not auto, nvml, management or imex"};
}

// Whether `path` is a program of NVIDIA's name (nvidia-cdi-hook, nvidia-ctk) that is not this
// gpu-ctk: the spec's hooks run `<ctk-path> hook <name> ...`, which NVIDIA's programs do not know
// (our links of those names are this program, and fine).
bool is_nvidias_program(const std::string& path) {
  const std::string name = basename_of(path);
  if (name != "nvidia-cdi-hook" && name != "nvidia-ctk") return false;
  struct stat given {
  }, self{};
  return ::stat(path.c_str(), &given) == 0 && ::stat("/proc/self/exe", &self) == 0 &&
         (given.st_dev != self.st_dev || given.st_ino != self.st_ino);
}

int generate(const std::vector<std::string>& args, Config config) {
  std::string output, format, vendor, device_class, ldconfig, mode = "auto";
  std::vector<std::string> strategies;
  bool no_all_device = false;
  po::options_description desc("options");
  desc.add_options()(
      "output,o", po::value(&output),
      "write the spec to FILE (atomically) instead of stdout; .yaml or .json is added to a name "
      "without either")("format", po::value(&format),
                        "json or yaml (default: from the --output extension, else yaml)")(
      "mode", po::value(&mode),
      "auto or nvml (the GPUs), management (one device `all` with every NVIDIA device node, "
      "for monitoring and management containers), or imex (a device per IMEX channel)")(
      "vendor", po::value(&vendor),
      "CDI vendor (default nvidia.com; management.nvidia.com for --mode management)")(
      "class", po::value(&device_class), "CDI class (default gpu; imex-channel for --mode imex)")(
      "driver-root", po::value(&config.driver.root), "driver root (default: [driver] root)")(
      "dev-root", po::value(&config.driver.dev_root), "dev root (default: [driver] dev-root)")(
      "ctk-path", po::value(&config.hooks.ctk_path),
      "gpu-ctk the spec's hooks run (default: [hooks] ctk-path)")(
      "ldconfig-path", po::value(&ldconfig),
      "the host's ldconfig the update-ldcache hook runs (default: [hooks] ldconfig)")(
      "device-name-strategy", po::value(&strategies)->composing(),
      "index, uuid or type-index (repeatable; default index and uuid)")(
      "no-all-device", po::bool_switch(&no_all_device), "leave out the device `all`");
  po::variables_map vm;
  if (auto done = parse(args, desc, {}, vm, "usage: gpu-ctk cdi generate [options]")) return *done;
  if (auto s = settle_output(output, format); !s) return fail(s.error().message);
  if (!ldconfig.empty())
    config.hooks.ldconfig = ldconfig.front() == '@' ? ldconfig : "@" + ldconfig;
  if (config.hooks.ldconfig.size() < 2 || config.hooks.ldconfig[1] != '/')
    return fail("--ldconfig-path must be an absolute host path");
  if (is_nvidias_program(config.hooks.ctk_path))
    return fail(config.hooks.ctk_path +
                " is NVIDIA's program, not gpu-ctk: the spec's hooks run `gpu-ctk hook ...`, which "
                "it does not know; name gpu-ctk or its nvidia-cdi-hook link (--ctk-path)");
  if ((mode == "management" || mode == "imex") && (!strategies.empty() || no_all_device))
    return fail("--device-name-strategy and --no-all-device do not apply to --mode " + mode);
  auto naming = naming_of(strategies, no_all_device);
  if (!naming) return fail(naming.error().message);
  DriverHost host(config.driver, lstat_node);
  auto spec = spec_of_mode(mode, host, config, vendor, device_class, *naming);
  for (const auto& note : host.notes().take())
    std::fprintf(stderr, "gpu-ctk cdi generate: warning: %s\n", note.c_str());
  if (!spec) return fail(spec.error().message);
  return put_spec(*spec, output, format);
}

Result<std::string> read_input(const std::string& input) {
  if (input == "-") return read_fd(STDIN_FILENO, kMaxCdiSpecBytes);
  return read_regular_file(input, kMaxCdiSpecBytes);
}

int transform(const std::vector<std::string>& args) {
  std::string kind, from, to, relative_to = "host", input = "-", output, format;
  po::options_description desc("options");
  desc.add_options()("from", po::value(&from), "the root the spec's paths are under now")(
      "to", po::value(&to), "the root they move to (default /)")(
      "relative-to", po::value(&relative_to),
      "host (host paths: device nodes', mounts' sources, the hooks run on the host) or "
      "container (paths in the container) (default host)")(
      "input", po::value(&input), "the spec to read, - for stdin (default -)")(
      "output,o", po::value(&output),
      "write the spec to FILE (atomically) instead of stdout; .yaml or .json is added to a name "
      "without either")("format", po::value(&format),
                        "json or yaml (default: from the --output extension, else yaml)")(
      "kind", po::value(&kind), "root (the only transform)");
  po::positional_options_description positional;
  positional.add("kind", 1);
  po::variables_map vm;
  if (auto done = parse(with_empty_values(args, {"to"}), desc, positional, vm,
                        "usage: gpu-ctk cdi transform root --from DIR [--to DIR] "
                        "[--relative-to host|container] [--input FILE|-] [--output FILE]"))
    return *done;
  if (kind != "root")
    return fail("transform `" + printable(kind, 64) + "`: the one transform is `root`");
  auto t = root_transform(from, to, relative_to);
  if (!t) return fail("transform root: " + t.error().message);
  if (auto s = settle_output(output, format); !s) return fail(s.error().message);
  const std::string where = input == "-" ? "stdin" : input;
  auto text = read_input(input);
  if (!text) return fail("cannot read the spec: " + text.error().message + " (" + where + ")");
  auto spec = parse_cdi_spec_either(*text);
  if (!spec) return fail("invalid spec: " + spec.error().message + " (" + where + ")");
  transform_cdi_root(*spec, *t);
  if (auto s = validate_cdi_spec(*spec); !s)
    return fail("the transformed spec is invalid: " + s.error().message + " (" + where + ")");
  return put_spec(*spec, output, format);
}

int list(const std::vector<std::string>& args, const Config& config) {
  std::vector<std::string> dirs = config.cdi.spec_dirs;
  po::options_description desc("options");
  add_spec_dir_option(desc, dirs);
  po::variables_map vm;
  if (auto done = parse(args, desc, {}, vm, "usage: gpu-ctk cdi list [--spec-dir DIR]..."))
    return *done;
  const CdiRegistry registry = load_cdi_registry(dirs);
  for (const auto& e : registry.errors)
    std::fprintf(stderr, "gpu-ctk cdi: warning: %s\n", e.c_str());
  for (const auto& [name, where] : registry.devices) std::printf("%s\n", name.c_str());
  return 0;
}

// A command's --spec-dir folders (default [cdi] spec-dirs) into `dirs` and its arguments, each
// a `what`, into `values`: nullopt when it goes on, else its exit status (--help, a bad option).
std::optional<int> parse_dirs_and_values(const std::vector<std::string>& args, const char* what,
                                         const char* description, const char* usage,
                                         std::vector<std::string>& dirs,
                                         std::vector<std::string>& values) {
  po::options_description desc("options");
  add_spec_dir_option(desc, dirs);
  desc.add_options()(what, po::value(&values), description);
  po::positional_options_description positional;
  positional.add(what, -1);
  po::variables_map vm;
  return parse(args, desc, positional, vm, usage);
}

int validate(const std::vector<std::string>& args, const Config& config) {
  std::vector<std::string> files;
  std::vector<std::string> dirs = config.cdi.spec_dirs;
  if (auto done = parse_dirs_and_values(args, "file", "spec file",
                                        "usage: gpu-ctk cdi validate [FILE...] [--spec-dir DIR]...",
                                        dirs, files))
    return *done;
  int problems = 0;
  if (files.empty()) {
    const CdiRegistry registry = load_cdi_registry(dirs);
    for (const auto& e : registry.errors) std::printf("%s\n", e.c_str());
    for (const auto& spec : registry.specs) std::printf("%s: ok\n", spec.path.c_str());
    problems = static_cast<int>(registry.errors.size());
  }
  for (const auto& file : files) {
    // What the file says, whoever owns it; the folders are checked as the runtime reads them.
    auto spec = read_cdi_spec_file(file, false);
    std::printf("%s: %s\n", file.c_str(), spec ? "ok" : spec.error().message.c_str());
    problems += spec ? 0 : 1;
  }
  return problems == 0 ? 0 : 1;
}

int resolve(const std::vector<std::string>& args, const Config& config) {
  std::vector<std::string> names;
  std::vector<std::string> dirs = config.cdi.spec_dirs;
  if (auto done = parse_dirs_and_values(args, "name", "qualified device name",
                                        "usage: gpu-ctk cdi resolve [--spec-dir DIR]... NAME...",
                                        dirs, names))
    return *done;
  auto edits = cdi_edits_for(load_cdi_registry(dirs), names);
  if (!edits) return fail(edits.error().message);
  std::printf("%s\n", json_text(Json{{"containerEdits", edits_to_json(*edits)}}).c_str());
  return 0;
}

}  // namespace

int ctk_cdi(const std::vector<std::string>& args) {
  const std::string sub = args.empty() ? "" : args.front();
  const std::vector<std::string> rest(args.begin() + (args.empty() ? 0 : 1), args.end());
  if (sub == "transform") return transform(rest);  // a file to a file: no configuration
  auto config = load_config(config_path_from_env());
  if (!config) return fail(config.error().message);
  if (sub == "generate") return generate(rest, *config);
  if (sub == "list") return list(rest, *config);
  if (sub == "validate") return validate(rest, *config);
  if (sub == "resolve") return resolve(rest, *config);
  std::fprintf(
      sub == "--help" || sub == "-h" ? stdout : stderr,
      "usage: gpu-ctk cdi generate [--output FILE] [--format json|yaml] [--vendor V] [--class C]\n"
      "                            [--mode auto|nvml|management|imex]\n"
      "                            [--driver-root DIR] [--dev-root DIR] [--ctk-path PATH]\n"
      "                            [--ldconfig-path PATH] [--device-name-strategy S]... "
      "[--no-all-device]\n"
      "       gpu-ctk cdi list [--spec-dir DIR]...\n"
      "       gpu-ctk cdi validate [FILE...] [--spec-dir DIR]...\n"
      "       gpu-ctk cdi resolve [--spec-dir DIR]... NAME...   (the merged edits, as JSON)\n"
      "       gpu-ctk cdi transform root --from DIR [--to DIR] [--relative-to host|container]\n"
      "                                  [--input FILE|-] [--output FILE] [--format json|yaml]\n");
  return sub == "--help" || sub == "-h" ? 0 : 2;
}

}  // namespace gcr
