// gpu-ctk runtime configure: register gpu-container-runtime with an engine.
#include <sys/stat.h>
#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "ctk/ctk.h"
#include "engines/engines.h"

namespace po = boost::program_options;

namespace gcr {
namespace {

constexpr const char* kUsage =
    "usage: gpu-ctk runtime configure [--runtime=docker|containerd|crio] [--config FILE] "
    "[--drop-in "
    "FILE]\n"
    "           [--runtime-name nvidia] [--runtime-path /usr/bin/gpu-container-runtime] "
    "[--runtime-arg ARG]...\n"
    "           [--set-as-default] [--cdi] [--dry-run | --stdout] [--remove]";

int fail(const std::string& msg) {
  std::fprintf(stderr, "gpu-ctk runtime configure: %s\n", msg.c_str());
  return 1;
}

bool valid_name(const std::string& name) {
  return !name.empty() && name.find_first_not_of(
                              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
                              std::string::npos;
}

Result<std::vector<FileChange>> plan(const ConfigureOptions& o) {
  if (o.engine == "docker") {
    auto daemon = read_existing(o.config_path);
    if (!daemon) return daemon.error();
    return plan_docker(o, *daemon);
  }
  auto drop = read_existing(drop_in_path(o));
  if (!drop) return drop.error();
  if (o.engine == "crio") {
    auto old_backup = read_existing(drop_in_path(o) + ".bak");
    if (!old_backup) return old_backup.error();
    auto sources = read_crio_sources(o);
    if (!sources) return sources.error();
    return plan_crio(o, *drop, *old_backup, *sources);
  }
  auto config = read_existing(o.config_path);
  if (!config) return config.error();
  return plan_containerd(o, *config, *drop);
}

bool present(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

void print_plan(const std::vector<FileChange>& changes) {
  if (changes.empty()) std::printf("nothing to change\n");
  for (const auto& c : changes) {
    if (c.content && c.delete_if_made) {
      std::printf("--- %s (removed if configure made it, else written as)\n%s", c.path.c_str(),
                  c.content->c_str());
    } else if (c.content) {
      std::printf("--- %s\n%s", c.path.c_str(), c.content->c_str());
    } else {
      std::printf("--- %s (removed)\n", c.path.c_str());
    }
  }
}

// nvidia-ctk's --dry-run: the engine's file that holds the runtime (daemon.json, the drop-in,
// a version 1 config.toml), as it would be, alone on stdout, so that it can be piped to jq.
int print_runtime_file(const ConfigureOptions& o, const std::vector<FileChange>& changes) {
  // The file a change writes, the drop-in first (a version 1 containerd file has none); with
  // nothing to change, the drop-in there is, else the main file.
  for (const std::string& path : {drop_in_path(o), o.config_path}) {
    for (const auto& c : changes) {
      if (c.path == path && c.content) {
        std::fputs(c.content->c_str(), stdout);
        return 0;
      }
    }
  }
  const auto drop_in = read_existing(drop_in_path(o));
  const bool has_drop_in = o.engine != "docker" && drop_in && drop_in->content;
  auto existing = has_drop_in ? drop_in : read_existing(o.config_path);
  if (!existing) return fail(existing.error().message);
  std::fputs(existing->content.value_or("").c_str(), stdout);
  return 0;
}

const char* service_of(const std::string& engine) {
  if (engine == "docker") return "docker";
  if (engine == "containerd") return "containerd";
  return "crio";
}

int configure(const std::vector<std::string>& args) {
  ConfigureOptions o;
  o.engine = "docker";  // NVIDIA's default too
  std::string config;
  bool dry_run = false;
  bool stdout_only = false;
  po::options_description desc("options");
  desc.add_options()("help,h", "this text")("runtime", po::value(&o.engine),
                                            "docker (the default), containerd or crio")(
      "config", po::value(&config), "the engine's main configuration file")(
      "drop-in", po::value<std::string>(),
      "containerd/CRI-O drop-in file (default: beside --config)")(
      "runtime-name", po::value(&o.runtime_name), "runtime / handler name (default nvidia)")(
      "runtime-path", po::value(&o.runtime_path),
      "path of the shim (default /usr/bin/gpu-container-runtime)")(
      "runtime-arg", po::value(&o.runtime_args)->composing(),
      "docker runtimeArgs entry (repeatable)")("set-as-default", po::bool_switch(&o.set_as_default),
                                               "make it the engine's default runtime")(
      "cdi", po::bool_switch(&o.cdi),
      "enable CDI in the engine (docker features.cdi, containerd enable_cdi)")(
      "dry-run", po::bool_switch(&dry_run), "print the resulting files instead of writing them")(
      "stdout", po::bool_switch(&stdout_only),
      "print only the file that holds the runtime, as it would be, and write nothing (what "
      "nvidia-ctk's --dry-run prints)")(
      "remove", po::bool_switch(&o.remove),
      "undo: remove the runtime (and default, and with --cdi the CDI switch)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(with_empty_values(args, {"drop-in"})).options(desc).run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return fail(e.what());
  }
  if (vm.count("help") != 0) {
    std::cout << kUsage << "\n\n" << desc;
    return 0;
  }
  if (o.engine != "docker" && o.engine != "containerd" && o.engine != "crio")
    return fail("--runtime must be docker, containerd or crio");
  if (!valid_name(o.runtime_name))
    return fail("--runtime-name may hold letters, digits, '_' and '-' only");
  if (o.runtime_path.empty()) return fail("--runtime-path must not be empty");
  if (o.engine != "docker" && o.runtime_path.front() != '/')
    return fail("--runtime-path must be absolute");
  if (vm.count("drop-in") != 0) o.drop_in = vm["drop-in"].as<std::string>();
  if (o.drop_in && (o.drop_in->empty() || o.drop_in->front() != '/'))
    return fail(
        "--drop-in must be an absolute path (editing the main file in place, NVIDIA's "
        "--drop-in-config=\"\", is not supported: containerd 2 and CRI-O take our runtime "
        "from a drop-in)");
  if (o.engine == "docker" && o.drop_in) return fail("docker has no drop-in files");
  o.config_path = config.empty() ? default_engine_config(o.engine) : config;
  auto changes = plan(o);
  if (!changes) return fail(changes.error().message);
  if (!o.remove) {
    auto main = read_existing(o.config_path);
    const auto cri_off =
        o.engine == "containerd" && main ? containerd_cri_disabled(*main) : std::nullopt;
    if (cri_off)
      std::fprintf(stderr,
                   "gpu-ctk runtime configure: warning: %s disables containerd's CRI plugin "
                   "(disabled_plugins holds \"%s\"): Kubernetes cannot use this containerd "
                   "until it is removed from that list\n",
                   o.config_path.c_str(), cri_off->c_str());
    for (const auto& later : drop_ins_read_after(o, main ? *main : ExistingFile{}))
      std::fprintf(stderr,
                   "gpu-ctk runtime configure: warning: %s is read after %s, so what it sets wins "
                   "over ours (nvidia-ctk's 99-nvidia.toml is one: remove it)\n",
                   later.c_str(), drop_in_path(o).c_str());
  }
  if (stdout_only) return print_runtime_file(o, *changes);
  if (dry_run) {
    print_plan(*changes);
    return 0;
  }
  if (auto s = apply_changes(*changes); !s) return fail(s.error().message);
  for (const auto& c : *changes)
    std::printf("%s %s\n", c.content && present(c.path) ? "wrote" : "removed", c.path.c_str());
  if (changes->empty()) {
    std::printf("nothing to change\n");
  } else {
    std::printf("restart %s to use it (systemctl restart %s)\n", service_of(o.engine),
                service_of(o.engine));
  }
  return 0;
}

}  // namespace

int ctk_runtime(const std::vector<std::string>& args) {
  if (!args.empty() && args.front() == "configure")
    return configure(std::vector<std::string>(args.begin() + 1, args.end()));
  std::fprintf(args.empty() || args.front() != "--help" ? stderr : stdout, "%s\n", kUsage);
  return !args.empty() && args.front() == "--help" ? 0 : 2;
}

}  // namespace gcr
