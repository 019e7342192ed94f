#include "oci/runc_args.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "base/text.h"

namespace gcr {
namespace {

constexpr std::string_view kShimConfigFlag = "gpu-config";

// runc's global flags that take a value (Go flag syntax: one or two dashes, "=" optional).
constexpr std::array<std::string_view, 6> kGlobalValueFlags = {"root", "log",      "log-format",
                                                               "criu", "rootless", kShimConfigFlag};

// Flags of runc's commands that take a value (create, run, exec). Anything else is a switch.
constexpr std::array<std::string_view, 20> kCommandValueFlags = {"bundle",
                                                                 "b",
                                                                 "console-socket",
                                                                 "pidfd-socket",
                                                                 "pid-file",
                                                                 "preserve-fds",
                                                                 "process",
                                                                 "p",
                                                                 "cwd",
                                                                 "env",
                                                                 "e",
                                                                 "user",
                                                                 "u",
                                                                 "additional-gids",
                                                                 "g",
                                                                 "cap",
                                                                 "c",
                                                                 "process-label",
                                                                 "apparmor",
                                                                 "cgroup"};

// Commands whose flags runc (urfave/cli) accepts after positionals too; `exec` opts out so
// the process's own argv is never read as runc flags.
constexpr std::array<std::string_view, 2> kReorderingCommands = {"create", "run"};

struct Flag {
  std::string_view name;
  std::optional<std::string_view> inline_value;
};

// "--name=value" / "-name" -> {name, value}; nullopt when `arg` is not a flag.
std::optional<Flag> as_flag(std::string_view arg) {
  if (arg.size() < 2 || arg.front() != '-' || arg == "--") return std::nullopt;
  arg.remove_prefix(arg[1] == '-' ? 2 : 1);
  if (arg.empty() || arg.front() == '-') return std::nullopt;
  const auto eq = arg.find('=');
  if (eq == std::string_view::npos) return Flag{arg, std::nullopt};
  return Flag{arg.substr(0, eq), arg.substr(eq + 1)};
}

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void apply_global_flag(RuncArgs& out, std::string_view name, std::string_view value) {
  if (name == "log") out.log_path = std::string(value);
  if (name == "log-format") out.log_format = std::string(value);
  if (name == kShimConfigFlag) out.config_path = std::string(value);
}

void apply_bool_flag(RuncArgs& out, std::string_view name, std::optional<std::string_view> value,
                     bool global) {
  const bool on = !value || *value == "true" || *value == "1";
  if (name == "help" || name == "h") out.help = out.help || on;
  if (global && (name == "version" || name == "v")) out.version = on;
  if (global && name == "debug") out.debug = on;
}

void apply_command_flag(RuncArgs& out, std::string_view name, std::string_view value) {
  if (name == "bundle" || name == "b") out.bundle = std::string(value);
  if (name == "preserve-fds") {
    const auto n = parse_go_unsigned(value);  // runc's flag library reads `0x2` too
    out.preserve_fds = n && *n < 65536 ? static_cast<unsigned>(*n) : 0;
  }
}

// Walks the global flags; returns the index of the command (or args.size()).
std::size_t parse_globals(const std::vector<std::string>& args, RuncArgs& out) {
  std::size_t i = 0;
  while (i < args.size()) {
    if (args[i] == "--") return i + 1;
    const auto flag = as_flag(args[i]);
    if (!flag) return i;
    if (contains(kGlobalValueFlags, flag->name)) {
      if (flag->inline_value) {
        apply_global_flag(out, flag->name, *flag->inline_value);
      } else if (i + 1 < args.size()) {
        apply_global_flag(out, flag->name, args[++i]);
      }
    } else {
      apply_bool_flag(out, flag->name, flag->inline_value, true);
    }
    ++i;
  }
  return i;
}

void parse_command_args(const std::vector<std::string>& args, std::size_t i, RuncArgs& out) {
  const bool reorders = contains(kReorderingCommands, std::string_view(out.command));
  bool flags_done = false;
  bool have_id = false;
  for (; i < args.size(); ++i) {
    const auto flag = flags_done ? std::nullopt : as_flag(args[i]);
    if (!flag) {
      if (args[i] == "--" && !flags_done) {
        flags_done = true;
        continue;
      }
      if (!have_id) {
        out.container_id = args[i];
        have_id = true;
      }
      if (!reorders) flags_done = true;
      continue;
    }
    if (!contains(kCommandValueFlags, flag->name)) {
      apply_bool_flag(out, flag->name, flag->inline_value, false);
      continue;
    }
    if (flag->inline_value) {
      apply_command_flag(out, flag->name, *flag->inline_value);
    } else if (i + 1 < args.size()) {
      apply_command_flag(out, flag->name, args[++i]);
    }
  }
}

}  // namespace

RuncArgs parse_runc_args(const std::vector<std::string>& args) {
  RuncArgs out;
  const std::size_t cmd = parse_globals(args, out);
  if (cmd >= args.size()) return out;
  out.command = args[cmd];
  parse_command_args(args, cmd + 1, out);
  return out;
}

std::vector<std::string> args_for_runc(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  out.reserve(args.size());
  std::size_t i = 0;
  for (; i < args.size(); ++i) {
    const auto flag = as_flag(args[i]);
    if (!flag) break;
    if (flag->name == kShimConfigFlag) {
      if (!flag->inline_value) ++i;
      continue;
    }
    out.push_back(args[i]);
    if (contains(kGlobalValueFlags, flag->name) && !flag->inline_value && i + 1 < args.size()) {
      out.push_back(args[++i]);
    }
  }
  out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(std::min(i, args.size())),
             args.end());
  return out;
}

}  // namespace gcr
