#include "doctor/engine_facts.h"

#include <charconv>

#include "base/text.h"

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

// "1.20.2" or "v1.20.2~ds1" at the start of `word`: its major and minor.
Result<Release> release_of(std::string_view word, const std::string& output) {
  if (!word.empty() && word.front() == 'v') word.remove_prefix(1);
  Release r;
  const char* end = word.data() + word.size();
  const auto major = std::from_chars(word.data(), end, r.major);
  if (major.ec != std::errc() || major.ptr == end || *major.ptr != '.' ||
      std::from_chars(major.ptr + 1, end, r.minor).ec != std::errc()) {
    return Error{"no version in `" + printable(output) + "`"};
  }
  return r;
}

// The `index`th blank-separated word of `text`; "" when there are fewer.
std::string_view word_at(std::string_view text, std::size_t index) {
  std::size_t i = 0;
  for (auto word : split(text, ' ')) {
    word = trim(word);
    if (word.empty()) continue;
    if (i++ == index) return word;
  }
  return {};
}

}  // namespace

Result<Release> kubelet_release(const std::string& version_output) {
  return release_of(word_at(version_output, 1), version_output);  // "Kubernetes v1.20.2"
}

Result<Release> containerd_release(const std::string& version_output) {
  return release_of(word_at(version_output, 2), version_output);  // "containerd <repo> 1.6.20"
}

std::string kubelet_lacks_cdi_devices(const Release& kubelet, const std::string& kubelet_yaml) {
  const std::string version = std::to_string(kubelet.major) + "." + std::to_string(kubelet.minor);
  if (kubelet >= Release{1, 29}) return "";
  if (kubelet < Release{1, 28})
    return "kubelet " + version + " has no CDI device field (it came in 1.28)";
  auto doc = yaml_to_json(kubelet_yaml);
  const Json* gates = doc ? member(*doc, "featureGates") : nullptr;
  const Json* gate = gates != nullptr ? member(*gates, "DevicePluginCDIDevices") : nullptr;
  if (gate != nullptr && gate->is_boolean() && gate->get<bool>()) return "";
  return "kubelet 1.28 passes CDI devices only with the DevicePluginCDIDevices feature gate, "
         "which its configuration file does not turn on (a --feature-gates flag is not seen)";
}

std::string containerd_lacks_cdi_devices(const Release& containerd) {
  if (containerd >= Release{1, 7}) return "";
  return "containerd " + std::to_string(containerd.major) + "." + std::to_string(containerd.minor) +
         " does not apply CDI devices (1.7 does, with enable_cdi = true)";
}

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
  // Docker's containerd.io package ships `disabled_plugins = ["cri"]`.
  if (const Json* disabled = member(config, "disabled_plugins"); disabled && disabled->is_array()) {
    for (const auto& name : *disabled) {
      if (name.is_string() &&
          (name == "cri" || name == plugin || name == "io.containerd.grpc.v1.cri"))
        facts.cri_disabled = name.get<std::string>();
    }
  }
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
