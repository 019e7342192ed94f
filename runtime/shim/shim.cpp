#include "shim/shim.h"

#include <unistd.h>

#include <cstdlib>
#include <exception>
#include <optional>
#include <utility>

#include "base/fs.h"
#include "base/step_clock.h"
#include "base/text.h"
#include "base/version.h"
#include "config/config_file.h"
#include "injection/create.h"
#include "log/log.h"
#include "oci/handoff.h"
#include "oci/runc_args.h"
#include "oci/runtime_lookup.h"
#include "shim/heap.h"

namespace gcr {
namespace {

constexpr const char* kProgram = "gpu-container-runtime";

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

void print_version() {
  (void)write_all(STDOUT_FILENO, std::string(kProgram) + " version " + kVersion + "\n\n");
}

// Set in the environment of the runtime we execute. Seeing it means that runtime started
// this shim again (a wrapper script named in [runtime] runtimes that calls the shim): every
// call would loop forever.
constexpr const char* kHandoffMarker = "GPU_CONTAINER_RUNTIME_HANDED_TO";

int shim_main(const std::string& program, const std::vector<std::string>& args, Logger& logger) {
  const RuncArgs runc = parse_runc_args(args);
  // Only a call that may edit the bundle times its steps and takes its small blocks from the
  // shim's heap: a pass-through call reads no clock and keeps malloc.
  std::optional<StepClock> clock;
  if (runc.edits_bundle()) {
    clock.emplace();
    start_create_heap();
  }
  logger.set_runc_log(runc.log_path, runc.log_format);
  if (const char* runtime = std::getenv(kHandoffMarker)) {
    logger.error(std::string("runtime loop: ") + printable(runtime) +
                 " started gpu-container-runtime again; [runtime] runtimes must name the real "
                 "low-level runtime (runc, crun), not a program that calls this shim");
    return 1;
  }
  if (runc.version) print_version();

  // A pass-through call reads [runtime] alone: what it uses, and all a typo elsewhere cannot stop.
  const auto file = config_file_in_effect(
      runc.config_path ? runc.config_path : config_path_from_env(), kDefaultConfigDir);
  auto config = file ? load_config_file(*file, runc.edits_bundle() ? ConfigScope::kWhole
                                                                   : ConfigScope::kRuntimeTable)
                     : Result<Config>(Config{});
  bool prepares = runc.edits_bundle();
  if (!config) {
    // A typo in the configuration stops a GPU container, never one without where the runtime
    // the file names is known (it may be every pod's runtime: crun, a sandbox), nor `delete`
    // or `kill` of running containers, which go to that runtime, or the built-in list.
    auto runtimes = runtimes_of_failed_config(*file);
    if (prepares && (!runtimes || bundle_may_ask_under_any_config(runc.bundle))) {
      logger.error(config.error().message);
      return 1;
    }
    prepares = false;
    logger.warning(config.error().message + "; this call, which asks for no GPU, uses the " +
                   (runtimes ? "runtimes the file names" : "built-in defaults"));
    config = Config{};
    if (runtimes) config->runtime.runtimes = std::move(*runtimes);
  }
  configure_logger(logger, config->runtime.log_level, config->runtime.log_file, runc.log_path,
                   runc.log_format, runc.debug);
  if (auto mode = requests_mode_of_program(program)) config->requests.mode = std::move(*mode);

  auto runtime = find_low_level_runtime(config->runtime.runtimes, env_or_empty("PATH"));
  if (!runtime) {
    logger.error(runtime.error().message);
    return 1;
  }
  if (prepares) {
    clock->mark("configuration");
    if (auto s = prepare_container(runc, *config, logger, *clock); !s) {
      logger.error(s.error().message);
      return 1;
    }
    // After a GPU create's steps (their line is the one before), how much of its heap it took.
    const auto use = create_heap_use();
    if (use && clock->marked("write") && logger.enabled(LogLevel::kDebug))
      logger.debug("small blocks from the create's heap: " + *use);
  }
  close_unhanded_fds(handed_fd_count(runc, std::getenv("LISTEN_FDS"), std::getenv("LISTEN_PID")));
  ::setenv(kHandoffMarker, runtime->c_str(), 1);
  logger.error(exec_runtime(*runtime, args_for_runc(args)).message);
  return 1;
}

}  // namespace

int run_shim(const std::string& program, const std::vector<std::string>& args) {
  Logger logger(kProgram);
  logger.keep_sinks_open();
  try {
    return shim_main(program, args, logger);
  } catch (const std::exception& e) {
    logger.error(std::string("internal error: ") + e.what());
    return 1;
  }
}

}  // namespace gcr
