#include "compat/nvidia_cli.h"

#include <array>
#include <span>
#include <string_view>

#include "base/text.h"

namespace gcr {
namespace {

enum class Takes { kNothing, kValue, kOptionalValue };

struct Flag {
  std::string_view name;
  char letter;  // 0: no short form
  Takes takes;
};

constexpr std::array<Flag, 7> kGlobal = {{{"load-kmods", 'k', Takes::kNothing},
                                          {"debug", 'd', Takes::kValue},
                                          {"no-pivot", 'n', Takes::kNothing},
                                          {"user", 'u', Takes::kOptionalValue},
                                          {"root", 'r', Takes::kValue},
                                          {"ldcache", 'l', Takes::kValue},
                                          {"no-create-imex-channels", 0, Takes::kNothing}}};

constexpr std::array<Flag, 21> kConfigure = {{{"pid", 'p', Takes::kValue},
                                              {"device", 'd', Takes::kValue},
                                              {"require", 'r', Takes::kValue},
                                              {"ldconfig", 'l', Takes::kValue},
                                              {"compute", 'c', Takes::kNothing},
                                              {"utility", 'u', Takes::kNothing},
                                              {"video", 'v', Takes::kNothing},
                                              {"graphics", 'g', Takes::kNothing},
                                              {"display", 'D', Takes::kNothing},
                                              {"ngx", 0, Takes::kNothing},
                                              {"compat32", 0, Takes::kNothing},
                                              {"mig-config", 0, Takes::kValue},
                                              {"mig-monitor", 0, Takes::kValue},
                                              {"imex-channel", 0, Takes::kValue},
                                              {"no-cgroups", 0, Takes::kNothing},
                                              {"no-devbind", 0, Takes::kNothing},
                                              {"no-persistenced", 0, Takes::kNothing},
                                              {"no-fabricmanager", 0, Takes::kNothing},
                                              {"no-gsp-firmware", 0, Takes::kNothing},
                                              {"cuda-compat-mode", 0, Takes::kValue},
                                              {"no-cntlibs", 0, Takes::kNothing}}};

constexpr std::array<Flag, 1> kInfo = {{{"csv", 'c', Takes::kNothing}}};

constexpr std::array<Flag, 11> kList = {{{"device", 'd', Takes::kValue},
                                         {"libraries", 'l', Takes::kNothing},
                                         {"binaries", 'b', Takes::kNothing},
                                         {"ipcs", 'i', Takes::kNothing},
                                         {"firmwares", 'f', Takes::kNothing},
                                         {"compat32", 0, Takes::kNothing},
                                         {"mig-config", 0, Takes::kValue},
                                         {"mig-monitor", 0, Takes::kValue},
                                         {"imex-channel", 0, Takes::kValue},
                                         {"no-persistenced", 0, Takes::kNothing},
                                         {"no-fabricmanager", 0, Takes::kNothing}}};

const Flag* find_flag(std::span<const Flag> flags, std::string_view arg) {
  if (arg.rfind("--", 0) == 0) {
    const auto name = arg.substr(
        2, arg.find('=') == std::string_view::npos ? std::string_view::npos : arg.find('=') - 2);
    for (const auto& f : flags) {
      if (f.name == name) return &f;
    }
    return nullptr;
  }
  for (const auto& f : flags) {
    if (f.letter != 0 && f.letter == arg[1] && (arg.size() == 2 || f.takes != Takes::kNothing))
      return &f;
  }
  return nullptr;
}

bool is_flag(const std::string& arg) {
  return arg.size() > 1 && arg[0] == '-';
}

// The flags from args[at] up to the first argument that is not one; `at` ends there.
Result<std::vector<CliFlagValue>> parse_flags(const std::vector<std::string>& args, std::size_t& at,
                                              std::span<const Flag> flags,
                                              const std::string& part) {
  std::vector<CliFlagValue> out;
  for (; at < args.size() && is_flag(args[at]); ++at) {
    const std::string& arg = args[at];
    const Flag* flag = find_flag(flags, arg);
    if (flag == nullptr) return Error{"unknown " + part + " flag " + quote(arg, 64)};
    CliFlagValue v{std::string(flag->name), ""};
    const bool is_long = arg.rfind("--", 0) == 0;
    const auto eq = arg.find('=');
    if (is_long && eq != std::string::npos) {
      if (flag->takes == Takes::kNothing) return Error{"`--" + v.name + "` takes no value"};
      v.value = arg.substr(eq + 1);
    } else if (!is_long && arg.size() > 2) {
      v.value = arg.substr(2);  // -d0
    } else if (flag->takes == Takes::kValue) {
      if (at + 1 >= args.size()) return Error{quote(arg, 64) + " needs a value"};
      v.value = args[++at];
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::span<const Flag> command_flags(const std::string& command) {
  if (command == "configure") return kConfigure;
  if (command == "info") return kInfo;
  if (command == "list") return kList;
  return {};
}

}  // namespace

Result<CliCommandLine> parse_nvidia_cli(const std::vector<std::string>& args) {
  CliCommandLine line;
  std::size_t at = 0;
  auto global = parse_flags(args, at, kGlobal, "global");
  if (!global) return global.error();
  line.global = std::move(*global);
  if (at >= args.size()) return Error{"no command (configure, info or list)"};
  line.command = args[at++];
  if (command_flags(line.command).empty())
    return Error{"unknown command " + quote(line.command, 64)};
  // Flags and operands may mix, as with argp.
  while (at < args.size()) {
    if (!is_flag(args[at])) {
      line.operands.push_back(args[at++]);
      continue;
    }
    auto flags = parse_flags(args, at, command_flags(line.command), line.command);
    if (!flags) return flags.error();
    line.flags.insert(line.flags.end(), flags->begin(), flags->end());
  }
  return line;
}

bool is_ctr_gpus_hook(const std::vector<std::string>& args) {
  return args.size() >= 4 && basename_of(args[0]) == "containerd" && args[1] == "oci-hook" &&
         args[2] == "--" && basename_of(args[3]) == kNvidiaCliName;
}

std::vector<std::string> nvidia_cli_args(const std::vector<std::string>& args) {
  if (!is_ctr_gpus_hook(args)) return {};
  return std::vector<std::string>(args.begin() + 4, args.end());
}

}  // namespace gcr
