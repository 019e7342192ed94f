#include "ctk/ctk.h"

#include <array>
#include <cstdio>

#include "base/version.h"

namespace gcr {
namespace {

constexpr std::array<CtkCommand, 5> kCommands = {{
    {"config", "print the default configuration or check a configuration file", ctk_config},
    {"info", "show the driver version, CUDA version and GPUs the runtime sees", ctk_info},
    {"runtime", "configure Docker, containerd or CRI-O to use gpu-container-runtime", ctk_runtime},
    {"cdi", "generate, list, validate and resolve CDI specs", ctk_cdi},
    {"hook", "the createContainer hooks the runtime injects (update-ldcache, create-symlinks)",
     ctk_hook},
}};

int usage(std::FILE* out) {
  std::fprintf(out, "usage: gpu-ctk <command> [options]\n\ncommands:\n");
  for (const auto& c : kCommands) std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  std::fprintf(out, "\n`gpu-ctk <command> --help` describes a command.\n");
  return out == stdout ? 0 : 2;
}

}  // namespace

int run_ctk(const std::string& program, const std::vector<std::string>& args) {
  if (program.substr(program.rfind('/') + 1) == "nvidia-container-runtime-hook")
    return legacy_nvidia_hook(args);
  if (args.empty()) return usage(stderr);
  const std::string& name = args.front();
  if (name == "--help" || name == "-h" || name == "help") return usage(stdout);
  if (name == "--version" || name == "-v" || name == "version") {
    std::printf("gpu-ctk version %s\n", kVersion);
    return 0;
  }
  for (const auto& c : kCommands) {
    if (name == c.name) return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  std::fprintf(stderr, "gpu-ctk: unknown command `%s`\n", name.c_str());
  return usage(stderr);
}

}  // namespace gcr
