// Engine configuration files as gpu-ctk runtime configure finds them: daemon.json and
// containerd's config.toml. Every planned file reads back (the planners check that before
// returning it, so a plan is only made of texts that parse).
#include "engines/engines.h"
#include "fuzz.h"
#include "json/strict_json.h"
#include "toml/toml.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(gcr::fuzz::text_of(data, size));
  gcr::ConfigureOptions options;
  options.set_as_default = size % 2 == 0;
  options.cdi = size % 3 == 0;
  options.remove = size % 5 == 0;
  options.engine = "docker";
  if (auto plan = gcr::plan_docker(options, gcr::ExistingFile{"/e/daemon.json", text})) {
    for (const auto& change : *plan) {
      if (change.content) gcr::fuzz::require(gcr::parse_json_strict(*change.content).ok());
    }
  }
  options.engine = "containerd";
  auto plan = gcr::plan_containerd(options, gcr::ExistingFile{"/e/config.toml", text},
                                   gcr::ExistingFile{"/e/conf.d/99.toml", std::nullopt});
  if (plan) {
    for (const auto& change : *plan) {
      if (change.content) gcr::fuzz::require(gcr::parse_toml(*change.content, "plan").ok());
    }
  }
  return 0;
}
