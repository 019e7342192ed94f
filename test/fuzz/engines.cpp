// Engine configuration files as gpu-ctk runtime configure finds them: daemon.json and
// containerd's config.toml, CRI-O's and the kubelet's files as gpu-ctk doctor reads them. Every
// planned file reads back (the planners check that before returning it, so a plan is only made
// of texts that parse), with an existing drop-in or without; what doctor reads of a planned file
// names the runtime planned; removing from a file with nothing of ours leaves it alone.
#include "engines/engines.h"
#include "doctor/engine_facts.h"
#include "fuzz.h"
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
      if (!change.content) continue;
      auto facts = gcr::docker_facts(*change.content);
      gcr::fuzz::require(facts.ok());
      if (options.remove) continue;
      gcr::fuzz::require(facts->runtimes.count("nvidia") == 1 &&
                         facts->runtimes.at("nvidia").path == options.runtime_path);
      if (options.set_as_default) gcr::fuzz::require(facts->default_runtime == "nvidia");
    }
  }
  (void)gcr::docker_facts(text);
  (void)gcr::containerd_facts(text, "fuzz.toml");
  (void)gcr::crio_facts({{"crio.conf", text}, {"crio.conf.d/99.conf", text}});
  (void)gcr::kubelet_cgroup_driver(text);
  options.engine = "containerd";
  // Without our runtime's name, the drop-in's or a CDI switch to take back, removing changes
  // nothing in the main file.
  const auto parsed = gcr::parse_toml(text, "fuzz.toml");
  const std::string decoded = parsed ? gcr::toml_to_json(*parsed).dump() : text;
  const bool nothing_of_ours = options.remove && !options.cdi &&
                               decoded.find(options.runtime_name) == std::string::npos &&
                               decoded.find("99.toml") == std::string::npos;
  for (const auto& drop_in : {std::optional<std::string>(), std::optional<std::string>(text)}) {
    auto plan = gcr::plan_containerd(options, gcr::ExistingFile{"/e/config.toml", text},
                                     gcr::ExistingFile{"/e/conf.d/99.toml", drop_in});
    if (!plan) continue;
    for (const auto& change : *plan) {
      if (change.content) gcr::fuzz::require(gcr::parse_toml(*change.content, "plan").ok());
      if (nothing_of_ours) gcr::fuzz::require(change.path != "/e/config.toml");
    }
  }
  options.engine = "crio";
  if (auto plan = gcr::plan_crio(options, gcr::ExistingFile{"/e/crio.conf.d/99.conf", text})) {
    for (const auto& change : *plan) {
      if (change.content) gcr::fuzz::require(gcr::parse_toml(*change.content, "plan").ok());
    }
  }
  return 0;
}
