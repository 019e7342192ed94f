// What gpu-ctk doctor reads from engine files: docker's daemon.json, containerd's effective
// configuration (versions 2 and 3), CRI-O's files in order, the kubelet's cgroupDriver.
#include <doctest/doctest.h>

#include "doctor/engine_facts.h"

TEST_CASE("docker: runtimes by name and the default (runc when unset)") {
  auto facts = gcr::docker_facts(
      R"({"runtimes": {"nvidia": {"path": "/usr/bin/gpu-container-runtime", "runtimeArgs": []}},
          "log-level": "warn"})");
  REQUIRE(facts.ok());
  CHECK(facts->default_runtime == "runc");
  CHECK(facts->runtimes.at("nvidia").path == "/usr/bin/gpu-container-runtime");
  facts = gcr::docker_facts(R"({"default-runtime": "nvidia"})");
  REQUIRE(facts.ok());
  CHECK(facts->default_runtime == "nvidia");
  CHECK(facts->runtimes.empty());
  CHECK_FALSE(gcr::docker_facts("[1]").ok());
  CHECK_FALSE(gcr::docker_facts("{").ok());
}

TEST_CASE("containerd: the CRI plugin's default and each runtime's BinaryName and SystemdCgroup") {
  const std::string v2 = R"(version = 2
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "nvidia"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
  SystemdCgroup = true
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia]
  runtime_type = "io.containerd.runc.v2"
[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.nvidia.options]
  BinaryName = "/usr/bin/gpu-container-runtime"
)";
  auto facts = gcr::containerd_facts(v2, "dump");
  REQUIRE(facts.ok());
  CHECK(facts->default_runtime == "nvidia");
  CHECK(facts->runtimes.at("nvidia").path == "/usr/bin/gpu-container-runtime");
  CHECK_FALSE(facts->runtimes.at("nvidia").systemd_cgroup.has_value());
  CHECK(facts->runtimes.at("runc").path == "");
  CHECK(facts->runtimes.at("runc").systemd_cgroup == true);

  const std::string v3 = R"(version = 3
[plugins."io.containerd.cri.v1.runtime".containerd]
  default_runtime_name = "gpu"
[plugins."io.containerd.cri.v1.runtime".containerd.runtimes.gpu.options]
  BinaryName = "/opt/gcr/gpu-container-runtime"
  SystemdCgroup = false
)";
  facts = gcr::containerd_facts(v3, "dump");
  REQUIRE(facts.ok());
  CHECK(facts->default_runtime == "gpu");
  CHECK(facts->runtimes.at("gpu").systemd_cgroup == false);

  // No version: containerd 1.x's first layout, the CRI plugin named "cri".
  facts = gcr::containerd_facts(
      "[plugins.cri.containerd]\ndefault_runtime_name = \"nvidia\"\n"
      "[plugins.cri.containerd.runtimes.nvidia.options]\nBinaryName = \"/usr/bin/x\"\n",
      "config.toml");
  REQUIRE(facts.ok());
  CHECK(facts->default_runtime == "nvidia");
  CHECK(facts->runtimes.at("nvidia").path == "/usr/bin/x");
  CHECK(facts->runtimes_table == "plugins.\"cri\".containerd.runtimes");

  facts = gcr::containerd_facts("version = 2\n", "dump");
  REQUIRE(facts.ok());
  CHECK(facts->default_runtime == "runc");
  CHECK(facts->runtimes.empty());
  const auto bad = gcr::containerd_facts("version = \n", "config.toml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("line 1") != std::string::npos);
}

TEST_CASE("CRI-O: later files win key by key") {
  auto facts = gcr::crio_facts(
      {{"crio.conf",
        "[crio.runtime]\ndefault_runtime = \"runc\"\n"
        "[crio.runtime.runtimes.runc]\nruntime_path = \"/usr/sbin/runc\"\n"},
       {"crio.conf.d/99-gpu.conf",
        "[crio.runtime]\ndefault_runtime = \"nvidia\"\n[crio.runtime.runtimes.nvidia]\n"
        "runtime_path = \"/usr/bin/gpu-container-runtime\"\n"}});
  REQUIRE(facts.ok());
  CHECK(facts->default_runtime == "nvidia");
  CHECK(facts->runtimes.at("runc").path == "/usr/sbin/runc");
  CHECK(facts->runtimes.at("nvidia").path == "/usr/bin/gpu-container-runtime");
  CHECK(gcr::crio_facts({})->default_runtime == "runc");
}

TEST_CASE("kubelet: cgroupDriver, cgroupfs when unset") {
  CHECK(*gcr::kubelet_cgroup_driver("kind: KubeletConfiguration\ncgroupDriver: systemd\n") ==
        "systemd");
  CHECK(*gcr::kubelet_cgroup_driver("kind: KubeletConfiguration\n") == "cgroupfs");
  CHECK_FALSE(gcr::kubelet_cgroup_driver("a: [\n").ok());
}

TEST_CASE("kubelet and containerd releases; which kubelets pass CDI devices") {
  CHECK(*gcr::kubelet_release("Kubernetes v1.20.2\n") == gcr::Release{1, 20});
  CHECK(*gcr::containerd_release(
            "containerd github.com/containerd/containerd 1.6.20~ds1 1.6.20~ds1-1+deb12u1\n") ==
        gcr::Release{1, 6});
  CHECK_FALSE(gcr::kubelet_release("Kubernetes\n").ok());
  CHECK_FALSE(gcr::containerd_release("containerd x vX.1").ok());
  CHECK(gcr::kubelet_lacks_cdi_devices({1, 20}, "") ==
        "kubelet 1.20 has no CDI device field (it came in 1.28)");
  const std::string gate = "featureGates:\n  DevicePluginCDIDevices: true\n";
  CHECK(gcr::kubelet_lacks_cdi_devices({1, 28}, gate) == "");
  CHECK(gcr::kubelet_lacks_cdi_devices({1, 28}, "featureGates: {DevicePluginCDIDevices: false}\n")
            .find("only with the DevicePluginCDIDevices feature gate") != std::string::npos);
  CHECK(gcr::kubelet_lacks_cdi_devices({1, 28}, "a: [\n") != "");
  CHECK(gcr::kubelet_lacks_cdi_devices({1, 29}, "") == "");
  CHECK(gcr::kubelet_lacks_cdi_devices({2, 0}, "") == "");
  CHECK(gcr::containerd_lacks_cdi_devices({1, 6}) ==
        "containerd 1.6 does not apply CDI devices (1.7 does, with enable_cdi = true)");
  CHECK(gcr::containerd_lacks_cdi_devices({1, 7}) == "");
  CHECK(gcr::containerd_lacks_cdi_devices({2, 1}) == "");
}
