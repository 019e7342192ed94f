#include "plugin_fixture.h"

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace gcr::test {

PluginFixture::PluginFixture(const Json& plugin_config, const SimHostOptions& options)
    : host(dir / "host", options) {
  make_dirs(kubelet_dir);
  Json config = host.driver_config();
  config["runtime"] = {{"log-level", "debug"}};
  config["device-plugin"] = {{"kubelet-dir", kubelet_dir}, {"labels-file", labels_file()}};
  config["device-plugin"].merge_patch(plugin_config);
  write_file(dir / "config.json", config.dump(2));
  write_file(events_file(), "");
  plugin_env.env["GCR_STUB_NVML_EVENTS"] = events_file();
}

void PluginFixture::describe_nvml(const std::string& text) {
  write_file(dir / "nvml-description", text);
  plugin_env.env["GCR_STUB_NVML"] = dir / "nvml-description";
}

void PluginFixture::send_nvml_event(const std::string& line) const {
  std::ofstream(events_file(), std::ios::app) << line << "\n";
}

void PluginFixture::start_kubelet() {
  kubelet = std::make_unique<FakeKubelet>(kubelet_dir);
}

void PluginFixture::start_plugin() {
  plugin = std::make_unique<Daemon>(
      std::vector<std::string>{built("gpu-device-plugin"), "--config", dir / "config.json"},
      plugin_env, dir / "plugin.log");
}

void PluginFixture::start() {
  start_kubelet();
  start_plugin();
  if (!kubelet->wait_for_registrations(1, std::chrono::seconds(10)))
    throw std::runtime_error("the plugin did not register:\n" + log());
}

std::string PluginFixture::log() const {
  return read_file(dir / "plugin.log");
}

bool PluginFixture::logged(const std::string& part) const {
  for (int i = 0; i < 50; ++i) {
    if (log().find(part) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace gcr::test
