// gpu-ctk config default | check [FILE] | import [FILE] [--write]
#include <algorithm>
#include <cstdio>

#include "base/fs.h"
#include "base/text.h"
#include "compat/nvidia_config.h"
#include "config/config_edit.h"
#include "config/config_file.h"
#include "ctk/ctk.h"
#include "engines/engines.h"
#include "mps/mps_daemon.h"

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
  // gpu-device-plugin makes, empties and chmods directories there: refused, it starts no daemon.
  if (config->mps()) {
    if (auto s = check_mps_root(config->device_plugin.mps_root); !s) {
      const std::string source = config->source.empty() ? "built-in defaults" : config->source;
      std::fprintf(stderr, "gpu-ctk: config: %s: %s\n", source.c_str(), s.error().message.c_str());
      return 1;
    }
  }
  if (config->source.empty()) {
    std::printf("no configuration file in %s: built-in defaults apply\n", kDefaultConfigDir);
  } else {
    std::printf("%s: ok\n", config->source.c_str());
  }
  return 0;
}

int import_fail(const std::string& msg) {
  std::fprintf(stderr, "gpu-ctk config import: %s\n", msg.c_str());
  return 1;
}

// gpu-ctk config import [FILE] [--write]: NVIDIA's configuration as ours.
int import(const std::vector<std::string>& args) {
  std::string source = kNvidiaConfigPath;
  bool write = false;
  for (const auto& arg : args) {
    if (arg == "--write") {
      write = true;
    } else if (arg.rfind('-', 0) == 0 || source != kNvidiaConfigPath) {
      std::fprintf(stderr, "usage: gpu-ctk config import [FILE] [--write]\n");
      return 2;
    } else {
      source = arg;
    }
  }
  auto text = read_regular_file(source, kMaxNvidiaConfigBytes);
  if (!text) return import_fail(text.error().message + " (" + source + ")");
  auto imported = import_nvidia_config(*text, source);
  if (!imported) return import_fail(imported.error().message);
  if (!write) {
    std::fputs(imported->toml.c_str(), stdout);
    return 0;
  }
  const std::string target =
      config_path_from_env().value_or(std::string(kDefaultConfigDir) + "/config.toml");
  if (!target.ends_with(".toml")) return import_fail(target + " is not a .toml file");
  // Written atomically; the file it replaces is kept as <target>.bak.
  if (auto s = apply_changes({{target, imported->toml}}); !s) return import_fail(s.error().message);
  std::printf("wrote %s (%zu of NVIDIA's keys have no equivalent: see its comments)\n",
              target.c_str(), imported->not_carried.size());
  return 0;
}

int set_fail(const std::string& msg) {
  std::fprintf(stderr, "nvidia-ctk config: %s\n", msg.c_str());
  return 1;
}

// nvidia-ctk config --set KEY[=VALUE]... [--in-place]: NVIDIA's keys set as ours, in our file
// (comments and other lines kept, the old file as .bak), or the result printed. A key with no
// equivalent here is a warning, not a failure (nvidia-container-cli.no-cgroups, which rootless
// Docker's steps set, means nothing to the shim).
int set_nvidia_keys(const std::vector<std::string>& args) {
  constexpr std::string_view kSet = "--nvidia-set=";
  std::vector<std::string> settings;
  bool in_place = false;
  for (const auto& arg : args) {
    if (arg.rfind(kSet, 0) == 0) {
      settings.push_back(arg.substr(kSet.size()));
    } else if (arg == "--in-place" || arg == "-i") {
      in_place = true;
    } else {
      std::fprintf(stderr, "usage: nvidia-ctk config --set KEY[=VALUE]... [--in-place]\n");
      return 2;
    }
  }
  auto nvidia = nvidia_settings_toml(settings);
  if (!nvidia) return set_fail(nvidia.error().message);
  auto imported = import_nvidia_config(*nvidia, "--set");
  if (!imported) return set_fail(imported.error().message);
  for (const auto& line : imported->not_carried)
    std::fprintf(stderr, "nvidia-ctk config: warning: %s: nothing set\n", line.c_str());
  // The file in effect; a config.json there is not edited (a config.toml beside it would take
  // its place, and drop every key it sets).
  const std::string target = config_file_in_effect(config_path_from_env(), kDefaultConfigDir)
                                 .value_or(std::string(kDefaultConfigDir) + "/config.toml");
  auto existing = read_existing(target);
  if (!existing) return set_fail(existing.error().message);
  if (imported->keys.empty()) {
    if (!in_place) std::fputs(existing->content.value_or("").c_str(), stdout);
    return 0;
  }
  if (!target.ends_with(".toml"))
    return set_fail(target + " is not a .toml file: set the keys there by hand");
  auto text = config_text_with_keys(existing->content.value_or(""), imported->keys, target);
  if (!text) return set_fail(text.error().message);
  if (!in_place) {
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  if (*text == existing->content.value_or("")) return 0;
  if (auto s = apply_changes({{target, *text}}); !s) return set_fail(s.error().message);
  std::fprintf(stderr, "nvidia-ctk config: set %s in %s\n", join(settings, ", ").c_str(),
               target.c_str());
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
  if (!help && std::any_of(args.begin(), args.end(), [](const std::string& arg) {
        return arg.rfind("--nvidia-set=", 0) == 0;
      }))
    return set_nvidia_keys(args);
  if (sub == "check" && !help) return check(std::vector<std::string>(args.begin() + 1, args.end()));
  if (sub == "import" && !help)
    return import(std::vector<std::string>(args.begin() + 1, args.end()));
  std::fprintf(
      help ? stdout : stderr,
      "usage: gpu-ctk config default     print the default configuration\n"
      "       gpu-ctk config check [FILE] validate FILE (default: the file in effect)\n"
      "       gpu-ctk config import [FILE] [--write]\n"
      "                                  NVIDIA's config.toml (default %s) as ours;\n"
      "                                  --write installs it (the old file kept as .bak)\n",
      kNvidiaConfigPath);
  return help ? 0 : 2;
}

}  // namespace gcr
