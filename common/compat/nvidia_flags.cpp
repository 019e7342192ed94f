#include "compat/nvidia_flags.h"

#include <array>
#include <optional>
#include <string_view>

#include "base/text.h"

namespace gcr {
namespace {

enum class Means {
  kOurs,      // the same as our flag `ours`, with the values in `values` ("" any)
  kAccepted,  // our behaviour already; allowed only with the values in `values` ("" any)
  kRefused,   // not supported: `why`
};

struct Spelling {
  std::string_view command;
  std::string_view nvidia;
  Means means;
  bool is_switch;
  std::string_view ours;    // kOurs: our long name
  std::string_view values;  // the values accepted, comma separated ("" any)
  std::string_view why;     // kRefused, or a value outside `values`
};

constexpr std::string_view kConfigure = "runtime configure";
constexpr std::string_view kGenerate = "cdi generate";
constexpr std::string_view kDevChar = "system create-dev-char-symlinks";

// Reasons that several spellings share.
constexpr std::string_view kNoOciHookMode =
    "only for --config-mode=oci-hook, which gpu-ctk does not have";
constexpr std::string_view kDiscovery =
    "gpu-ctk generates specs from the driver's files and NVML (auto, nvml), the management spec "
    "(management) and the IMEX channels' (imex)";
constexpr std::string_view kNoCsv = "CSV (Tegra) mode is not supported";
constexpr std::string_view kHooksAlways =
    "the spec always has the update-libraries hook (links and loader cache)";
constexpr std::string_view kNoFeatureFlags = "no feature flags";
constexpr std::string_view kEveryGpu = "gpu-ctk puts every GPU in the spec";
constexpr std::string_view kStateOnStdin = "the OCI state is read from stdin";
constexpr std::string_view kDefaultsOnStdout =
    "gpu-ctk config default prints the defaults on stdout";

constexpr std::array<Spelling, 54> kSpellings = {{
    {kConfigure, "nvidia-runtime-name", Means::kOurs, false, "runtime-name", "", ""},
    {kConfigure, "nvidia-runtime-path", Means::kOurs, false, "runtime-path", "", ""},
    {kConfigure, "nvidia-set-as-default", Means::kOurs, true, "set-as-default", "", ""},
    // Switches of ours that NVIDIA's spell the same: listed so that `--flag=true|false` is read
    // as urfave/cli reads it.
    {kConfigure, "set-as-default", Means::kOurs, true, "set-as-default", "", ""},
    {kConfigure, "dry-run", Means::kOurs, true, "dry-run", "", ""},
    {kConfigure, "cdi.enabled", Means::kOurs, true, "cdi", "", ""},
    {kConfigure, "cdi.enable", Means::kOurs, true, "cdi", "", ""},
    {kConfigure, "enable-cdi", Means::kOurs, true, "cdi", "", ""},
    {kConfigure, "drop-in-config", Means::kOurs, false, "drop-in", "", ""},
    {kConfigure, "config-source", Means::kAccepted, false, "", "file",
     "gpu-ctk reads and writes the engine's files; name the file with --config"},
    {kConfigure, "config-mode", Means::kAccepted, false, "", "config-file",
     "gpu-ctk registers the runtime in the engine's configuration; OCI hook files are not "
     "written"},
    {kConfigure, "executable-path", Means::kRefused, false, "", "",
     "only for --config-source=command, which gpu-ctk does not have"},
    {kConfigure, "oci-hook-path", Means::kRefused, false, "", "", kNoOciHookMode},
    {kConfigure, "nvidia-runtime-hook-path", Means::kRefused, false, "", "", kNoOciHookMode},
    {kGenerate, "cdi-vendor", Means::kOurs, false, "vendor", "", ""},
    {kGenerate, "cdi-class", Means::kOurs, false, "class", "", ""},
    {kGenerate, "nvidia-ctk-path", Means::kOurs, false, "ctk-path", "", ""},
    {kGenerate, "format", Means::kOurs, false, "format", "json,yaml", "a spec is json or yaml"},
    {kGenerate, "mode", Means::kOurs, false, "mode", "auto,nvml,management,imex", kDiscovery},
    {kGenerate, "discovery-mode", Means::kOurs, false, "mode", "auto,nvml,management,imex",
     kDiscovery},
    {kGenerate, "device-id", Means::kAccepted, false, "", "all", kEveryGpu},
    {kGenerate, "device-ids", Means::kAccepted, false, "", "all", kEveryGpu},
    {kGenerate, "device", Means::kAccepted, false, "", "all", kEveryGpu},
    {kGenerate, "devices", Means::kAccepted, false, "", "all", kEveryGpu},
    {kGenerate, "nvidia-cdi-hook-path", Means::kOurs, false, "ctk-path", "", ""},
    {kGenerate, "no-all-device", Means::kOurs, true, "no-all-device", "", ""},
    {kGenerate, "library-search-path", Means::kRefused, false, "", "",
     "libraries are found through the driver root's ld.so.cache and library directories"},
    {kGenerate, "config-search-path", Means::kRefused, false, "", "",
     "configuration files are found in the driver root's usual directories"},
    {kGenerate, "csv.file", Means::kRefused, false, "", "", kNoCsv},
    {kGenerate, "csv.ignore-pattern", Means::kRefused, false, "", "", kNoCsv},
    {kGenerate, "csv.compat-container-root", Means::kRefused, false, "", "", kNoCsv},
    {kGenerate, "disable-hook", Means::kRefused, false, "", "", kHooksAlways},
    {kGenerate, "disable-hooks", Means::kRefused, false, "", "", kHooksAlways},
    {kGenerate, "enable-hook", Means::kRefused, false, "", "", kHooksAlways},
    {kGenerate, "enable-hooks", Means::kRefused, false, "", "", kHooksAlways},
    {kGenerate, "feature-flag", Means::kRefused, false, "", "", kNoFeatureFlags},
    {kGenerate, "feature-flags", Means::kRefused, false, "", "", kNoFeatureFlags},
    {"hook update-ldcache", "container-spec", Means::kRefused, false, "", "", kStateOnStdin},
    {"hook create-symlinks", "container-spec", Means::kRefused, false, "", "", kStateOnStdin},
    {"hook enable-cuda-compat", "container-spec", Means::kRefused, false, "", "", kStateOnStdin},
    {"hook disable-device-node-modification", "container-spec", Means::kRefused, false, "", "",
     kStateOnStdin},
    {"hook update-application-profile", "container-spec", Means::kRefused, false, "", "",
     kStateOnStdin},
    {"config", "set", Means::kOurs, false, "nvidia-set", "", ""},
    {"config", "in-place", Means::kOurs, true, "in-place", "", ""},
    {"config", "config-file", Means::kRefused, false, "", "",
     "gpu-ctk config check FILE checks a file; gpu-ctk config import FILE converts NVIDIA's"},
    {"config", "output", Means::kRefused, false, "", "", kDefaultsOnStdout},
    {"config default", "output", Means::kRefused, false, "", "", kDefaultsOnStdout},
    {"hook update-ldcache", "ldconfig-path", Means::kOurs, false, "ldconfig-path", "", ""},
    {kGenerate, "ldconfig-path", Means::kOurs, false, "ldconfig-path", "", ""},
    {kDevChar, "driver-root", Means::kOurs, false, "dev-root", "", ""},
    {kDevChar, "create-all", Means::kOurs, true, "create-all", "", ""},
    {kDevChar, "dry-run", Means::kOurs, true, "dry-run", "", ""},
    {kDevChar, "load-kernel-modules", Means::kRefused, true, "", "",
     "gpu-ctk loads no kernel module: load them first (nvidia-modprobe -u -c=0); the packages' "
     "udev rule runs this command when they load"},
    {kDevChar, "create-device-nodes", Means::kRefused, true, "", "",
     "gpu-ctk makes no device node: nvidia-modprobe makes them (-c=<minor> for a GPU, -u for "
     "nvidia-uvm)"},
}};

// nvidia-ctk's --ldconfig-path names a host program, which we write as @<path>.
std::string our_value(std::string_view ours, const std::string& value, bool as_nvidia_ctk) {
  if (as_nvidia_ctk && ours == "ldconfig-path" && !value.empty() && value.front() != '@')
    return "@" + value;
  return value;
}

const Spelling* spelling_of(const std::string& command, std::string_view name) {
  for (const auto& s : kSpellings) {
    if (s.command == command && s.nvidia == name) return &s;
  }
  return nullptr;
}

bool listed(std::string_view values, std::string_view value) {
  for (auto v : split(values, ',')) {
    if (v == value) return true;
  }
  return false;
}

// A switch's value as urfave/cli reads `--flag=VALUE`.
Result<bool> switch_value(const std::string& flag, const std::string& value) {
  if (value == "true" || value == "1" || value == "t" || value == "T" || value == "TRUE" ||
      value == "True")
    return true;
  if (value == "false" || value == "0" || value == "f" || value == "F" || value == "FALSE" ||
      value == "False")
    return false;
  return Error{"--" + flag + ": " + quote(value, 64) + " is not true or false"};
}

// cdi generate's environment variables, the flag each stands for, and every name the command
// line can give that flag by (NVIDIA's aliases and ours).
struct EnvFlag {
  std::string_view variable;
  std::string_view flag;
  std::string_view names;  // comma separated
  bool list = false;       // a comma-separated list: one flag per item
  bool is_switch = false;
};

constexpr std::array<EnvFlag, 20> kGenerateEnv = {{
    {"NVIDIA_CTK_CDI_OUTPUT_FILE_PATH", "output", "output,o"},
    {"NVIDIA_CTK_CDI_GENERATE_OUTPUT_FORMAT", "format", "format"},
    {"NVIDIA_CTK_CDI_GENERATE_MODE", "mode", "mode,discovery-mode"},
    {"NVIDIA_CTK_DRIVER_ROOT", "driver-root", "driver-root"},
    {"NVIDIA_CTK_DEV_ROOT", "dev-root", "dev-root"},
    {"NVIDIA_CTK_CDI_GENERATE_DEVICE_NAME_STRATEGIES", "device-name-strategy",
     "device-name-strategy", true},
    {"NVIDIA_CTK_CDI_GENERATE_DEVICE_IDS", "device-id", "device-id,device-ids,device,devices",
     true},
    {"NVIDIA_CTK_CDI_GENERATE_NO_ALL_DEVICE", "no-all-device", "no-all-device", false, true},
    {"NVIDIA_CTK_CDI_HOOK_PATH", "nvidia-cdi-hook-path",
     "nvidia-cdi-hook-path,nvidia-ctk-path,ctk-path"},
    {"NVIDIA_CTK_CDI_GENERATE_LDCONFIG_PATH", "ldconfig-path", "ldconfig-path"},
    {"NVIDIA_CTK_CDI_GENERATE_VENDOR", "vendor", "vendor,cdi-vendor"},
    {"NVIDIA_CTK_CDI_GENERATE_CLASS", "class", "class,cdi-class"},
    {"NVIDIA_CTK_CDI_GENERATE_CONFIG_SEARCH_PATHS", "config-search-path", "config-search-path",
     true},
    {"NVIDIA_CTK_CDI_GENERATE_LIBRARY_SEARCH_PATHS", "library-search-path", "library-search-path",
     true},
    {"NVIDIA_CTK_CDI_GENERATE_CSV_FILES", "csv.file", "csv.file", true},
    {"NVIDIA_CTK_CDI_GENERATE_CSV_IGNORE_PATTERNS", "csv.ignore-pattern", "csv.ignore-pattern",
     true},
    {"NVIDIA_CTK_CDI_GENERATE_DISABLED_HOOKS", "disable-hook", "disable-hook,disable-hooks", true},
    {"NVIDIA_CTK_CDI_GENERATE_ENABLED_HOOKS", "enable-hook", "enable-hook,enable-hooks", true},
    {"NVIDIA_CTK_CDI_GENERATE_FEATURE_FLAGS", "feature-flag", "feature-flag,feature-flags", true},
    {"NVIDIA_CTK_CDI_GENERATE_CSV_COMPAT_CONTAINER_ROOT", "csv.compat-container-root",
     "csv.compat-container-root"},
}};

// Whether `arg` gives the flag `name` (--name, --name=..., and nvidia-ctk's -name; -o).
bool gives(const std::string& arg, std::string_view name) {
  const std::string_view a(arg);
  for (std::string_view dashes : {"--", "-"}) {
    if (!a.starts_with(dashes)) continue;
    const std::string_view rest = a.substr(dashes.size());
    if (rest.starts_with(name) && (rest.size() == name.size() || rest[name.size()] == '='))
      return true;
  }
  return false;
}

bool given(const std::vector<std::string>& args, std::string_view names) {
  for (auto name : split(names, ',')) {
    for (const auto& arg : args) {
      if (gives(arg, name)) return true;
    }
  }
  return false;
}

// The value the command line gives a flag of one of `names` (--name=V, --name V, -name V), the
// last one given.
std::optional<std::string> nvidia_value(const std::vector<std::string>& args,
                                        std::string_view names) {
  std::optional<std::string> value;
  for (std::size_t i = 0; i < args.size(); ++i) {
    for (auto name : split(names, ',')) {
      if (!gives(args[i], name)) continue;
      const auto eq = args[i].find('=');
      if (eq != std::string::npos)
        value = args[i].substr(eq + 1);
      else if (i + 1 < args.size())
        value = args[i + 1];
    }
  }
  return value;
}

// The value of our flag `name` in `args` (--name=VALUE or --name VALUE), the last one given.
std::optional<std::string> value_of(const std::vector<std::string>& args, std::string_view name) {
  std::optional<std::string> value;
  const std::string flag = "--" + std::string(name);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size())
      value = args[++i];
    else if (args[i].rfind(flag + "=", 0) == 0)
      value = args[i].substr(flag.size() + 1);
  }
  return value;
}

// The NVIDIA-spelled flags `e`'s value stands for.
Result<std::vector<std::string>> env_as_flags(const EnvFlag& e, const std::string& value) {
  const std::string flag = "--" + std::string(e.flag);
  if (e.is_switch) {
    auto on = switch_value(std::string(e.flag), value);
    if (!on) return on.error();
    return *on ? std::vector<std::string>{flag} : std::vector<std::string>{};
  }
  if (!e.list) return std::vector<std::string>{flag + "=" + value};
  std::vector<std::string> flags;
  for (auto item : split(value, ',')) {
    if (!trim(item).empty()) flags.push_back(flag + "=" + std::string(trim(item)));
  }
  return flags;
}

}  // namespace

Result<std::vector<std::string>> nvidia_env_flags(const std::string& command,
                                                  const std::vector<std::string>& args,
                                                  const EnvLookup& env) {
  std::vector<std::string> out;
  if (command != kGenerate) return out;
  const std::string mode = nvidia_value(args, "mode,discovery-mode")
                               .value_or(env("NVIDIA_CTK_CDI_GENERATE_MODE").value_or(""));
  const bool names_no_gpus = mode == "management" || mode == "imex";
  for (const auto& e : kGenerateEnv) {
    // Empty is unset (the flag's default); NVIDIA's management and IMEX modes name no GPUs.
    const auto value = env(std::string(e.variable));
    if (!value || value->empty() || given(args, e.names)) continue;
    if (names_no_gpus && (e.flag == "device-name-strategy" || e.flag == "no-all-device")) continue;
    auto flags = env_as_flags(e, *value);
    auto ours = flags ? translate_nvidia_flags(command, *flags, true) : flags;
    if (!ours) return ours.error().wrap(std::string(e.variable));
    out.insert(out.end(), ours->begin(), ours->end());
  }
  return out;
}

std::vector<std::string> with_nvidia_defaults(const std::string& command,
                                              std::vector<std::string> args) {
  if (command != kGenerate || value_of(args, "dev-root")) return args;
  if (const auto root = value_of(args, "driver-root")) args.push_back("--dev-root=" + *root);
  return args;
}

Result<std::vector<std::string>> translate_nvidia_flags(const std::string& command,
                                                        const std::vector<std::string>& args,
                                                        bool as_nvidia_ctk) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (as_nvidia_ctk && arg.size() > 2 && arg[0] == '-' && arg[1] != '-') arg = "-" + arg;
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      out.push_back(arg);
      continue;
    }
    const auto eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::optional<std::string> value;
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    const Spelling* s = spelling_of(command, name);
    if (s == nullptr) {
      out.push_back(arg);
      continue;
    }
    if (!s->is_switch && !value) {
      if (i + 1 >= args.size()) return Error{"--" + name + " needs a value"};
      value = args[++i];
    }
    if (s->means == Means::kRefused)
      return Error{"--" + name + " is not supported: " + std::string(s->why)};
    // NVIDIA's tools take these values in any case (--format=JSON).
    if (!s->values.empty() && value) value = to_lower(*value);
    if (!s->values.empty() && value && !listed(s->values, *value)) {
      return Error{"--" + name + "=" + printable(*value, 64) +
                   " is not supported: " + std::string(s->why)};
    }
    if (s->means == Means::kAccepted) continue;
    if (s->is_switch) {
      bool on = true;
      if (value) {
        auto parsed = switch_value(name, *value);
        if (!parsed) return parsed.error();
        on = *parsed;
      }
      // nvidia-ctk's --dry-run prints the engine's file alone (our --stdout).
      const bool file_alone = as_nvidia_ctk && command == kConfigure && s->ours == "dry-run";
      if (on) out.push_back(file_alone ? "--stdout" : "--" + std::string(s->ours));
      continue;
    }
    out.push_back("--" + std::string(s->ours) + "=" + our_value(s->ours, *value, as_nvidia_ctk));
  }
  return out;
}

Result<LegacyHookArgs> read_legacy_hook_flags(const std::vector<std::string>& args) {
  LegacyHookArgs out;
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;
    const std::string flag = arg.substr(arg[1] == '-' ? 2 : 1);
    const auto eq = flag.find('=');
    const std::string name = flag.substr(0, eq);
    const std::optional<std::string> value =
        eq == std::string::npos ? std::nullopt : std::optional<std::string>(flag.substr(eq + 1));
    if (name == "debug" || name == "version") {
      bool on = true;
      if (value) {
        auto parsed = switch_value(name, *value);
        if (!parsed) return parsed.error();
        on = *parsed;
      }
      if (name == "version") out.version = on;
    } else if (name == "config") {
      if (!value && ++i >= args.size()) return Error{"-config needs a value"};
    } else {
      return Error{"flag provided but not defined: -" + printable(name, 64)};
    }
  }
  out.rest.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  return out;
}

}  // namespace gcr
