// gpu-device-plugin under test: a simulated host, a kubelet directory, the plugin's
// configuration, the fake kubelet and the plugin process (with the stub NVML's files in its
// environment when a test gives them).
#pragma once

#include <memory>
#include <string>

#include "fake_kubelet.h"
#include "json/strict_json.h"
#include "sim_host.h"
#include "test_support.h"

namespace gcr::test {

inline const std::string kPluginSocket = "gpu-device-plugin-nvidia.com-gpu.sock";

struct PluginFixture {
  TempDir dir;
  SimHost host;
  std::string kubelet_dir = dir / "kubelet";
  std::unique_ptr<FakeKubelet> kubelet;
  std::unique_ptr<Daemon> plugin;
  RunOptions plugin_env;

  explicit PluginFixture(const Json& plugin_config = Json::object(),
                         const SimHostOptions& options = {});

  // The stub NVML describes `text` to the plugin; events go to events_file().
  void describe_nvml(const std::string& text);
  [[nodiscard]] std::string events_file() const { return dir / "nvml-events"; }
  // The labels file the plugin keeps (under dir, never the node's real NFD directory).
  [[nodiscard]] std::string labels_file() const { return dir / "features.d/gpu-container-runtime"; }
  void send_nvml_event(const std::string& line) const;

  void start_kubelet();
  void start_plugin();
  // The usual start: the kubelet is there, the plugin registers.
  void start();
  [[nodiscard]] std::string log() const;
  // The log holds `part`, now or within five seconds (the plugin logs after the fact).
  [[nodiscard]] bool logged(const std::string& part) const;
};

}  // namespace gcr::test
