// Walks runc's command-line grammar (global flags, command, command flags, positionals)
// without rejecting anything: whatever we do not understand is runc's to judge.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gcr {

struct RuncArgs {
  std::string command;                     // "" when argv holds no command
  std::optional<std::string> log_path;     // global --log
  std::string log_format = "text";         // global --log-format
  bool debug = false;                      // global --debug
  bool version = false;                    // global --version / -v
  bool help = false;                       // --help / -h, global or after the command
  std::string bundle;                      // create/run: --bundle/-b ("" = working directory)
  std::string container_id;                // first positional after the command
  unsigned preserve_fds = 0;               // --preserve-fds of the command
  std::optional<std::string> config_path;  // shim-only global --gpu-config (removed before exec)

  // True for the commands whose bundle the shim edits (with --help or --version runc prints
  // that and runs no command).
  [[nodiscard]] bool edits_bundle() const {
    return !help && !version && (command == "create" || command == "run");
  }
};

// Parses argv[1..] (the program name excluded).
[[nodiscard]] RuncArgs parse_runc_args(const std::vector<std::string>& args);

// The argv to hand runc: args minus the shim-only flags, byte-identical otherwise.
[[nodiscard]] std::vector<std::string> args_for_runc(const std::vector<std::string>& args);

}  // namespace gcr
