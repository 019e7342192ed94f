// gpu-ctk config default | check [FILE]
#include <algorithm>
#include <cstdio>

#include "config/config_file.h"
#include "ctk/ctk.h"

namespace gcr {
namespace {

int check(const std::vector<std::string>& args) {
  if (args.size() > 1) {
    std::fprintf(stderr, "usage: gpu-ctk config check [FILE]\n");
    return 2;
  }
  const auto explicit_path = args.empty() ? config_path_from_env() : std::optional(args.front());
  auto config = load_config(explicit_path);
  if (!config) {
    std::fprintf(stderr, "gpu-ctk: %s\n", config.error().message.c_str());
    return 1;
  }
  if (config->source.empty()) {
    std::printf("no configuration file in %s: built-in defaults apply\n", kDefaultConfigDir);
  } else {
    std::printf("%s: ok\n", config->source.c_str());
  }
  return 0;
}

}  // namespace

int ctk_config(const std::vector<std::string>& args) {
  const std::string sub = args.empty() ? "" : args.front();
  const bool help = std::any_of(args.begin(), args.end(), [](const std::string& arg) {
    return arg == "--help" || arg == "-h";
  });
  if (sub == "default" && args.size() == 1) {
    std::fputs(default_config_toml().c_str(), stdout);
    return 0;
  }
  if (sub == "check" && !help) return check(std::vector<std::string>(args.begin() + 1, args.end()));
  std::fprintf(help ? stdout : stderr,
               "usage: gpu-ctk config default     print the default configuration\n"
               "       gpu-ctk config check [FILE] validate FILE (default: the file in effect)\n");
  return help ? 0 : 2;
}

}  // namespace gcr
