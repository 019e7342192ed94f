#include "ctk/ctk.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <variant>

#include "base/environment.h"
#include "base/text.h"
#include "base/version.h"
#include "compat/nvidia_cli.h"
#include "compat/nvidia_flags.h"

namespace gcr {
namespace {

constexpr const char* kNvidiaCdiHookName = "nvidia-cdi-hook";

constexpr std::array<CtkCommand, 8> kCommands = {{
    {"config", "print the default configuration or check a configuration file", ctk_config},
    {"info", "show the driver version, CUDA version and GPUs the runtime sees", ctk_info},
    {"runtime", "configure Docker, containerd or CRI-O to use gpu-container-runtime", ctk_runtime},
    {"cdi", "generate, list, validate, resolve and transform CDI specs", ctk_cdi},
    {"hook",
     "the createContainer hooks (update-libraries, disable-device-node-modification; "
     "update-ldcache, create-symlinks, enable-cuda-compat)",
     ctk_hook},
    {"doctor", "check the node end to end and say what keeps GPUs from containers", ctk_doctor},
    {"labels", "print the node's Kubernetes labels (GPU Feature Discovery's names, NVLink sets)",
     ctk_labels},
    {"system", "the host's /dev/char links for NVIDIA's device nodes (create-dev-char-symlinks)",
     ctk_system},
}};

int usage(std::FILE* out) {
  std::fprintf(out, "usage: gpu-ctk <command> [options]\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\n`gpu-ctk <command> --help` describes a command.\n");
  return out == stdout ? 0 : 2;
}

// nvidia-ctk's global flags, before the command: --debug and --quiet change nothing here;
// --config names NVIDIA's configuration, which we do not read. Returns the arguments after
// them, or an exit status.
std::variant<std::vector<std::string>, int> strip_nvidia_globals(std::vector<std::string> args) {
  while (!args.empty()) {
    const std::string& arg = args.front();
    if (arg == "--debug" || arg == "-debug" || arg == "-d" || arg == "--quiet" || arg == "-quiet" ||
        arg == "-q") {
      args.erase(args.begin());
    } else if (arg == "--config" || arg == "-config" || arg.rfind("--config=", 0) == 0) {
      std::fprintf(stderr,
                   "nvidia-ctk: --config is not supported: gpu-ctk reads "
                   "/etc/gpu-container-runtime/config.toml (GPU_CONTAINER_RUNTIME_CONFIG); gpu-ctk "
                   "config import converts NVIDIA's\n");
      return 2;
    } else {
      break;
    }
  }
  return args;
}

// The command path NVIDIA's spellings are looked up under: "runtime configure", "cdi generate",
// "hook update-ldcache", "config", "info".
std::string command_path(const std::vector<std::string>& args) {
  if (args.size() > 1 && args[1].rfind('-', 0) != 0) return args[0] + " " + args[1];
  return args.empty() ? "" : args[0];
}

int run_command(const std::string& tool, std::vector<std::string> args, bool nvidia) {
  if (args.empty()) return usage(stderr);
  const std::string name = args.front();
  if (name == "--help" || name == "-h" || name == "help") return usage(stdout);
  if (name == "--version" || name == "-v" || name == "version") {
    std::printf("gpu-ctk version %s%s\n", kVersion, nvidia ? (" (as " + tool + ")").c_str() : "");
    return 0;
  }
  const auto* command = std::find_if(kCommands.begin(), kCommands.end(),
                                     [&](const CtkCommand& c) { return name == c.name; });
  if (command == kCommands.end()) {
    std::fprintf(stderr, "%s: unknown command `%s`%s\n", tool.c_str(), name.c_str(),
                 nvidia ? " (gpu-ctk has no such command; docs/nvidia-compat.md lists NVIDIA's "
                          "commands and ours)"
                        : "");
    return usage(stderr);
  }
  const std::string path = command_path(args);
  const std::size_t fixed = path.find(' ') == std::string::npos ? 1 : 2;
  const std::vector<std::string> flags(args.begin() + static_cast<long>(fixed), args.end());
  auto translated = translate_nvidia_flags(path, flags, nvidia);
  if (translated && nvidia) {
    auto from_env = nvidia_env_flags(path, flags, environment_variable);
    if (from_env) {
      translated->insert(translated->end(), from_env->begin(), from_env->end());
      *translated = with_nvidia_defaults(path, std::move(*translated));
    } else {
      translated = from_env.error();
    }
  }
  if (!translated) {
    std::fprintf(stderr, "%s %s: %s\n", tool.c_str(), path.c_str(),
                 translated.error().message.c_str());
    return 2;
  }
  std::vector<std::string> rest(args.begin() + 1, args.begin() + static_cast<long>(fixed));
  rest.insert(rest.end(), translated->begin(), translated->end());
  return command->run(rest);
}

// NVIDIA's CDI hook program: `nvidia-cdi-hook <hook> [flags]` is `nvidia-ctk hook <hook>`.
std::vector<std::string> as_hook_command(std::vector<std::string> args) {
  const bool version = !args.empty() && (args.front() == "--version" || args.front() == "-v" ||
                                         args.front() == "version");
  if (!version) args.insert(args.begin(), "hook");
  return args;
}

}  // namespace

std::vector<std::string> with_empty_values(const std::vector<std::string>& args,
                                           const std::vector<std::string>& flags) {
  std::vector<std::string> out;
  for (const auto& arg : args) {
    const bool empty = std::any_of(flags.begin(), flags.end(),
                                   [&](const std::string& f) { return arg == "--" + f + "="; });
    out.push_back(empty ? arg.substr(0, arg.size() - 1) : arg);
    if (empty) out.emplace_back();
  }
  return out;
}

int run_ctk(const std::string& program, const std::vector<std::string>& args) {
  const std::string tool = basename_of(program);
  if (tool == "nvidia-container-runtime-hook" || tool == "nvidia-container-toolkit")
    return legacy_nvidia_hook(args);
  if (tool == kNvidiaCliName) return nvidia_container_cli(args);
  if (tool != "nvidia-ctk" && tool != kNvidiaCdiHookName)
    return run_command("gpu-ctk", args, false);
  auto stripped = strip_nvidia_globals(args);
  if (const int* status = std::get_if<int>(&stripped)) return *status;
  auto& rest = std::get<std::vector<std::string>>(stripped);
  return run_command(tool, tool == kNvidiaCdiHookName ? as_hook_command(std::move(rest)) : rest,
                     true);
}

}  // namespace gcr
