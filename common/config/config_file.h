// Finding and reading the configuration file (TOML or JSON, same keys).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "config/config.h"

namespace gcr {

inline constexpr const char* kConfigEnvVar = "GPU_CONTAINER_RUNTIME_CONFIG";
inline constexpr const char* kDefaultConfigDir = "/etc/gpu-container-runtime";

// How much of the file a caller reads. kRuntimeTable is for the shim's pass-through calls,
// which use [runtime] alone: of a TOML file whose [runtime] table can be told apart from the
// rest without parsing it (runtime_table_text), only that table is parsed and checked; the
// other tables keep their defaults. Any other file is read whole.
enum class ConfigScope { kWhole, kRuntimeTable };

// Reads one file; its extension (.toml or .json) picks the syntax. Errors name the file.
[[nodiscard]] Result<Config> load_config_file(const std::string& path,
                                              ConfigScope scope = ConfigScope::kWhole);

// The configuration in effect: `explicit_path` if given (a missing file is an error), else
// <config_dir>/config.toml, else <config_dir>/config.json, else built-in defaults.
[[nodiscard]] Result<Config> load_config(const std::optional<std::string>& explicit_path,
                                         const std::string& config_dir = kDefaultConfigDir,
                                         ConfigScope scope = ConfigScope::kWhole);

// The file load_config reads: `explicit_path` if given, else <config_dir>/config.toml, else
// <config_dir>/config.json; nothing when neither is there (the built-in defaults).
[[nodiscard]] std::optional<std::string> config_file_in_effect(
    const std::optional<std::string>& explicit_path, const std::string& config_dir);

// The [runtime] runtimes a file names that load_config_file refused for another reason (an
// unknown key, a bad value elsewhere): the calls the shim only hands on still reach the runtime
// that made the containers. Nothing when the file may not be trusted, cannot be parsed, or
// names no valid list.
[[nodiscard]] std::optional<std::vector<std::string>> runtimes_of_failed_config(
    const std::string& path);

// The [requests] mode NVIDIA's mode-named programs stand for, whatever the file says:
// nvidia-container-runtime.cdi "cdi", nvidia-container-runtime.legacy "auto" (the live
// driver, as NVIDIA's legacy mode reads it); nullopt for any other program. `program` is
// argv[0], a path or a name.
[[nodiscard]] std::optional<std::string> requests_mode_of_program(const std::string& program);

// The lines of a TOML text's [runtime] table (its header included; "" when it has none), or
// nullopt when they cannot be told apart from the rest by lines alone: a multi-line string,
// a key before the first table, a second [runtime], a [runtime.x], or a line starting with
// '[' that is no plain header (a quoted name, an array of tables, a line of an array). A
// line of an array that looks like a header (`[1]`) ends the table there, which then is no
// TOML by itself: the caller reads the whole file.
[[nodiscard]] std::optional<std::string> runtime_table_text(std::string_view text);

// A TOML text as toml_to_json would give it (tables and keys in order), read without a TOML
// parser where every line is one a configuration file usually holds: blank, a comment, a plain
// `[table]` header, or `key = value` on one line, the value `"text"`, `["a", "b"]`, `true`,
// `false`, a decimal integer or `{}`, all in printable ASCII. nullopt for anything else (an
// escape, a literal string, a key before the first table, a dotted or quoted name, a duplicate
// key or table, a float, an array of other things), which the caller hands to the TOML parser:
// neither a create nor a pass-through call with a shipped file starts it.
[[nodiscard]] std::optional<Json> simple_config_toml(std::string_view text);

// The explicit path the environment asks for ($GPU_CONTAINER_RUNTIME_CONFIG), if any.
[[nodiscard]] std::optional<std::string> config_path_from_env();

}  // namespace gcr
