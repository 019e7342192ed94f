// A simulated GPU host plus a shim configuration pointing at it, the built gpu-ctk and the
// recording fake runc.
#pragma once

#include <string>
#include <vector>

#include "shim_fixture.h"
#include "sim_host.h"

namespace gcr::test {

class GpuFixture : public ShimFixture {
 public:
  explicit GpuFixture(const SimHostOptions& options = {},
                      const Json& extra_config = Json::object());

  [[nodiscard]] const SimHost& host() const { return host_; }
  void configure(const Json& extra) const;

  // Writes a spec whose process env is `env` (merged with `patch`), runs `create` through the
  // shim and returns the result.
  ProcessResult create(const std::vector<std::string>& env,
                       const Json& patch = Json::object()) const;
  // The shim configured to start real runc, and a glibc rootfs (busybox) in the bundle.
  void use_real_runc() const;
  // Runs `script` with busybox sh in a container with `env` (and `patch` merged into its spec),
  // through the shim and, after use_real_runc(), real runc.
  ProcessResult run_busybox(const std::vector<std::string>& env, const std::string& script,
                            const Json& patch = Json::object()) const;
  // The bundle's config.json now.
  [[nodiscard]] Json spec() const;

  // linux.devices paths -> "major:minor"
  [[nodiscard]] std::map<std::string, std::string> devices() const;
  // mount destinations
  [[nodiscard]] std::vector<std::string> mount_destinations() const;
  // The names of the spec's createContainer hooks ("update-libraries" for gpu-ctk hook
  // update-libraries ...; a hook of another program: its path). Every GPU container on the
  // simulated host gets disable-device-node-modification: its params say ModifyDeviceFiles: 1.
  [[nodiscard]] std::vector<std::string> hook_names() const;
  [[nodiscard]] Json mount_at(const std::string& destination) const;

 private:
  SimHost host_;
};

// A GpuFixture whose shim also writes its JSON-lines log, at debug level.
class LoggedFixture : public GpuFixture {
 public:
  explicit LoggedFixture(const SimHostOptions& options = {});
  // configure() with the log's keys.
  void configure(const Json& extra) const;
  // The messages logged at `level`.
  [[nodiscard]] std::vector<std::string> logged(const std::string& level) const;
  // Whether a warning holds `part`.
  [[nodiscard]] bool warned(const std::string& part) const;
};

}  // namespace gcr::test
