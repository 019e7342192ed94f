#include "doctor/engine_facts.h"

#include "cdi/yaml.h"
#include "engines/engines.h"
#include "json/strict_json.h"
#include "toml/toml.h"

namespace gcr {
namespace {

const Json* member(const Json& object, const std::string& key) {
  if (!object.is_object()) return nullptr;
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string string_member(const Json& object, const std::string& key) {
  const Json* v = member(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : "";
}

}  // namespace

Result<EngineFacts> docker_facts(const std::string& daemon_json) {
  auto doc = parse_json_strict(daemon_json);
  if (!doc) return doc.error();
  if (!doc->is_object()) return Error{"daemon.json is not a JSON object"};
  EngineFacts facts;
  facts.default_runtime = string_member(*doc, "default-runtime");
  if (facts.default_runtime.empty()) facts.default_runtime = "runc";
  if (const Json* runtimes = member(*doc, "runtimes");
      runtimes != nullptr && runtimes->is_object()) {
    for (const auto& [name, runtime] : runtimes->items())
      facts.runtimes[name] = EngineRuntime{string_member(runtime, "path"), std::nullopt};
  }
  return facts;
}

Result<EngineFacts> containerd_facts(const std::string& toml_text, const std::string& source) {
  auto table = parse_toml(toml_text, source);
  if (!table) return table.error();
  const Json config = toml_to_json(*table);
  EngineFacts facts;
  facts.default_runtime = "runc";
  const Json* version = member(config, "version");
  const std::string plugin = containerd_cri_plugin(
      version != nullptr && version->is_number_integer() ? version->get<int>() : 1);
  facts.runtimes_table = "plugins.\"" + plugin + "\".containerd.runtimes";
  const Json* plugins = member(config, "plugins");
  const Json* cri = plugins != nullptr ? member(*plugins, plugin) : nullptr;
  const Json* containerd = cri != nullptr ? member(*cri, "containerd") : nullptr;
  if (containerd == nullptr) return facts;
  if (auto name = string_member(*containerd, "default_runtime_name"); !name.empty())
    facts.default_runtime = name;
  const Json* runtimes = member(*containerd, "runtimes");
  if (runtimes == nullptr || !runtimes->is_object()) return facts;
  for (const auto& [name, runtime] : runtimes->items()) {
    EngineRuntime r;
    if (const Json* options = member(runtime, "options")) {
      r.path = string_member(*options, "BinaryName");
      if (const Json* systemd = member(*options, "SystemdCgroup"); systemd && systemd->is_boolean())
        r.systemd_cgroup = systemd->get<bool>();
    }
    facts.runtimes[name] = r;
  }
  return facts;
}

Result<EngineFacts> crio_facts(const std::vector<std::pair<std::string, std::string>>& files) {
  EngineFacts facts;
  facts.default_runtime = "runc";
  for (const auto& [path, text] : files) {
    auto table = parse_toml(text, path);
    if (!table) return table.error();
    const Json config = toml_to_json(*table);
    const Json* crio = member(config, "crio");
    const Json* runtime = crio != nullptr ? member(*crio, "runtime") : nullptr;
    if (runtime == nullptr) continue;
    if (auto name = string_member(*runtime, "default_runtime"); !name.empty())
      facts.default_runtime = name;
    const Json* runtimes = member(*runtime, "runtimes");
    if (runtimes == nullptr || !runtimes->is_object()) continue;
    for (const auto& [name, entry] : runtimes->items()) {
      auto& r = facts.runtimes[name];
      if (auto p = string_member(entry, "runtime_path"); !p.empty()) r.path = p;
    }
  }
  return facts;
}

Result<std::string> kubelet_cgroup_driver(const std::string& yaml_text) {
  auto doc = yaml_to_json(yaml_text);
  if (!doc) return doc.error();
  const std::string driver = doc->is_object() ? string_member(*doc, "cgroupDriver") : "";
  return driver.empty() ? std::string("cgroupfs") : driver;
}

}  // namespace gcr
