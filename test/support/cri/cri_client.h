// The kubelet's side of the CRI (Kubernetes' runtime.v1 API, compiled from the api.proto that
// Debian ships), for tests that drive containerd as a kubelet does: a pod sandbox, containers in
// it configured from a device plugin's Allocate answer as the kubelet configures them, and
// commands run in them. Failures throw `<what> failed: <why> (<socket>)`. The API's own header
// stays in cri_client.cpp: its enum Signal names SIGABRT and the rest, which <signal.h> defines as
// macros in the test files that include this one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "deviceplugin/api.pb.h"
#include "test_support.h"

namespace runtime::v1 {
class PodSandboxConfig;
}

namespace gcr::test {

class CriClient {
 public:
  explicit CriClient(const std::string& socket);
  ~CriClient();
  CriClient(const CriClient&) = delete;
  CriClient& operator=(const CriClient&) = delete;

  // Waits (30 s at most) until the runtime reports RuntimeReady; throws with its conditions.
  void wait_until_ready() const;
  // "containerd v2.1.9": the runtime's name and version, as Version answers them.
  [[nodiscard]] std::string version() const;

  [[nodiscard]] const std::string& socket() const { return socket_; }
  // The channel and the RuntimeService's stub (cri_client.cpp).
  struct Connection;
  [[nodiscard]] const Connection& connection() const { return *connection_; }

 private:
  std::string socket_;
  std::unique_ptr<Connection> connection_;
};

// A pod as the kubelet runs one: a sandbox in the host's network namespace (nothing for CNI to
// do), with the runtime handler a RuntimeClass names ("" for the runtime's default), stopped and
// removed with its containers when the object dies.
class CriPod {
 public:
  CriPod(const CriClient& cri, const std::string& name, const std::string& handler,
         const std::string& log_dir);
  ~CriPod();
  CriPod(const CriPod&) = delete;
  CriPod& operator=(const CriPod&) = delete;

  // Creates and starts a container of `image` running `command`, configured from `answer` as
  // the kubelet configures it; returns its ID.
  [[nodiscard]] std::string start_container(const std::string& name, const std::string& image,
                                            const std::vector<std::string>& command,
                                            const v1beta1::ContainerAllocateResponse& answer);
  // ExecSync of `command` in the container (10 s at most).
  [[nodiscard]] ProcessResult exec(const std::string& container,
                                   const std::vector<std::string>& command) const;

 private:
  const CriClient& cri_;
  std::unique_ptr<runtime::v1::PodSandboxConfig> config_;
  std::string id_;
};

}  // namespace gcr::test
