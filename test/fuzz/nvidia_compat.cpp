// NVIDIA's formats we read: nvidia-container-cli's argv (NUL-separated arguments) and its
// config.toml imported as ours. Properties: an imported file's printed configuration reads
// back as the same configuration; a parsed command line names only known commands.
#include "compat/nvidia_cli.h"
#include "compat/nvidia_config.h"
#include "fuzz.h"
#include "toml/toml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto text = gcr::fuzz::text_of(data, size);
  if (auto line = gcr::parse_nvidia_cli(gcr::fuzz::parts_of(text, '\0'))) {
    gcr::fuzz::require(line->command == "configure" || line->command == "info" ||
                       line->command == "list");
  }
  if (auto imported = gcr::import_nvidia_config(std::string(text), "fuzz.toml")) {
    auto table = gcr::parse_toml(imported->toml, "printed.toml");
    gcr::fuzz::require(table.ok());
    auto again = gcr::config_from_json(gcr::toml_to_json(*table));
    gcr::fuzz::require(again.ok());
    gcr::fuzz::require(again->requests.supported_capabilities ==
                           imported->config.requests.supported_capabilities &&
                       again->runtime.runtimes == imported->config.runtime.runtimes &&
                       again->runtime.log_file == imported->config.runtime.log_file &&
                       again->driver.root == imported->config.driver.root &&
                       again->driver.dev_root == imported->config.driver.dev_root &&
                       again->cdi.spec_dirs == imported->config.cdi.spec_dirs &&
                       again->cdi.default_kind == imported->config.cdi.default_kind &&
                       again->hooks.ctk_path == imported->config.hooks.ctk_path &&
                       again->hooks.ldconfig == imported->config.hooks.ldconfig);
  }
  return 0;
}
