// `cdi transform root`: which paths move, by whole components, on which side (NVIDIA's
// `nvidia-ctk cdi transform root`, reference/nvidia-container-toolkit.md §5.2).
#include <doctest/doctest.h>

#include "cdi/spec.h"
#include "cdi/transform.h"

using gcr::Json;

namespace {

gcr::RootTransform transform(const std::string& from, const std::string& to,
                             const std::string& side = "host") {
  auto t = gcr::root_transform(from, to, side);
  REQUIRE_MESSAGE(t.ok(), (t ? "" : t.error().message));
  return *t;
}

std::string moved(const std::string& path, const std::string& from, const std::string& to) {
  return gcr::transformed_path(path, transform(from, to));
}

// A driver container's spec: its files under /run/nvidia/driver, a hook of every kind.
gcr::CdiSpec driver_container_spec() {
  auto spec = gcr::cdi_spec_from_json(Json::parse(R"({
    "cdiVersion": "0.5.0", "kind": "nvidia.com/gpu",
    "devices": [{"name": "gpu0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}}],
    "containerEdits": {
      "deviceNodes": [{"path": "/dev/nvidiactl"},
                      {"path": "/dev/nvidia-uvm", "hostPath": "/run/nvidia/driver/dev/nvidia-uvm"}],
      "hooks": [
        {"hookName": "createContainer", "path": "/run/nvidia/driver/usr/bin/nvidia-cdi-hook",
         "args": ["nvidia-cdi-hook", "create-symlinks", "--link",
                  "/run/nvidia/driver/lib/libcuda.so.1::/run/nvidia/driver/lib/libcuda.so"]},
        {"hookName": "startContainer", "path": "/run/nvidia/driver/bin/start",
         "args": ["start", "/run/nvidia/driver/etc"]},
        {"hookName": "prestart", "path": "/run/nvidia/driver/bin/pre",
         "args": ["pre", "/run/nvidia/driver/etc", "/run/nvidia/driverx", "--x=/run/nvidia/driver"]}
      ],
      "mounts": [{"hostPath": "/run/nvidia/driver/usr/lib/libcuda.so.1",
                  "containerPath": "/run/nvidia/driver/usr/lib/libcuda.so.1",
                  "options": ["ro", "nosuid", "nodev", "bind"]}]
    }})"));
  REQUIRE(spec.ok());
  return *spec;
}

}  // namespace

TEST_CASE("a path moves when it is the root or below it by whole components") {
  CHECK(moved("/run/nvidia/driver/lib/libcuda.so", "/run/nvidia/driver", "/") == "/lib/libcuda.so");
  CHECK(moved("/run/nvidia/driver", "/run/nvidia/driver", "/host") == "/host");
  CHECK(moved("/run/nvidia/driver", "/run/nvidia/driver", "/") == "/");
  CHECK(moved("/usr/lib/libcuda.so", "/run/nvidia/driver", "/host") == "/usr/lib/libcuda.so");
  CHECK(moved("/run/nvidia/driver-backup/lib", "/run/nvidia/driver", "/host") ==
        "/run/nvidia/driver-backup/lib");
  CHECK(moved("/run/nvidia/driverfoo", "/run/nvidia/driver", "/host") == "/run/nvidia/driverfoo");
  CHECK(moved("/run/nvidia/driver/lib/libcuda.so", "/run/nvidia/driver/", "/host/") ==
        "/host/lib/libcuda.so");
  CHECK(moved("/usr/lib/libcuda.so", "/", "/host") == "/host/usr/lib/libcuda.so");
  CHECK(moved("/", "/", "/host") == "/host");
  CHECK(moved("nvidia-cdi-hook", "/", "/host") == "nvidia-cdi-hook");
  CHECK(moved("", "/", "/host") == "");
  CHECK(moved("/a/b", "/a", "") == "/b");  // --to "" is /, as NVIDIA's joins it
  CHECK(moved("/a/b", "/a", "/a") == "/a/b");
}

TEST_CASE("the flags: an absolute --from, an absolute or empty --to, host or container") {
  CHECK(gcr::root_transform("", "/", "host").error().message ==
        "--from `` must be an absolute path");
  CHECK(gcr::root_transform("run/nvidia", "/", "host").error().message ==
        "--from `run/nvidia` must be an absolute path");
  CHECK(gcr::root_transform("/run", "host", "host").error().message ==
        "--to `host` must be an absolute path");
  CHECK(gcr::root_transform("/run", "/", "both").error().message ==
        "--relative-to `both` is not host or container");
  CHECK(transform("/run/", "", "container").side == gcr::RootSide::kContainer);
  CHECK(transform("/run/", "", "container").from == "/run");
  CHECK(transform("/run/", "", "container").to == "/");
  // Cleaned as NVIDIA's are: a root spelled another way names the same directory.
  CHECK(transform("/run//nvidia/./driver/", "/a/b/../c").from == "/run/nvidia/driver");
  CHECK(transform("/run//nvidia/./driver/", "/a/b/../c").to == "/a/c");
  CHECK(transform("/..", "/x/..").from == "/");
  CHECK(transform("/..", "/x/..").to == "/");
}

TEST_CASE("relative to the host: host paths, the hooks run on the host, their arguments") {
  auto spec = driver_container_spec();
  gcr::transform_cdi_root(spec, transform("/run/nvidia/driver", "/"));
  const auto& e = spec.edits;
  // A node at the same path on both sides keeps its one path: it is not under the root.
  CHECK(e.device_nodes[0].path == "/dev/nvidiactl");
  CHECK(e.device_nodes[0].host_path == "");
  CHECK(e.device_nodes[1].path == "/dev/nvidia-uvm");
  CHECK(e.device_nodes[1].host_path == "/dev/nvidia-uvm");
  // createContainer: its program is the host's, its arguments the container's.
  CHECK(e.hooks[0].path == "/usr/bin/nvidia-cdi-hook");
  CHECK(e.hooks[0].args[3] ==
        "/run/nvidia/driver/lib/libcuda.so.1::/run/nvidia/driver/lib/libcuda.so");
  // startContainer: both the container's.
  CHECK(e.hooks[1].path == "/run/nvidia/driver/bin/start");
  CHECK(e.hooks[1].args[1] == "/run/nvidia/driver/etc");
  // prestart: both the host's; whole arguments only.
  CHECK(e.hooks[2].path == "/bin/pre");
  CHECK(e.hooks[2].args ==
        std::vector<std::string>{"pre", "/etc", "/run/nvidia/driverx", "--x=/run/nvidia/driver"});
  CHECK(e.mounts[0].host_path == "/usr/lib/libcuda.so.1");
  CHECK(e.mounts[0].container_path == "/run/nvidia/driver/usr/lib/libcuda.so.1");
  CHECK(gcr::validate_cdi_spec(spec).ok());
}

TEST_CASE("a node without a host path gets one where its host path moves, and 0.5.0 with it") {
  auto spec = gcr::cdi_spec_from_json(Json::parse(R"({
    "cdiVersion": "0.3.0", "kind": "nvidia.com/gpu",
    "devices": [{"name": "gpu0", "containerEdits": {"deviceNodes": [{"path": "/dev/nvidia0"}]}}]
  })"));
  REQUIRE(spec.ok());
  gcr::transform_cdi_root(*spec, transform("/run", "/host/run"));
  CHECK(spec->version == "0.3.0");  // nothing moved
  gcr::transform_cdi_root(*spec, transform("/dev", "/host/dev"));
  CHECK(spec->devices[0].edits.device_nodes[0].path == "/dev/nvidia0");
  CHECK(spec->devices[0].edits.device_nodes[0].host_path == "/host/dev/nvidia0");
  CHECK(spec->version == "0.5.0");  // a node's host path is a 0.5.0 field
  CHECK(gcr::validate_cdi_spec(*spec).ok());
}

TEST_CASE("relative to the container: container paths, the hooks run in it, both link sides") {
  auto spec = driver_container_spec();
  gcr::transform_cdi_root(spec, transform("/run/nvidia/driver", "/opt/driver", "container"));
  const auto& e = spec.edits;
  CHECK(e.device_nodes[1].path == "/dev/nvidia-uvm");
  CHECK(e.hooks[0].path == "/run/nvidia/driver/usr/bin/nvidia-cdi-hook");
  CHECK(e.hooks[0].args[3] == "/opt/driver/lib/libcuda.so.1::/opt/driver/lib/libcuda.so");
  CHECK(e.hooks[1].path == "/opt/driver/bin/start");
  CHECK(e.hooks[1].args[1] == "/opt/driver/etc");
  CHECK(e.hooks[2].path == "/run/nvidia/driver/bin/pre");
  CHECK(e.hooks[2].args[1] == "/run/nvidia/driver/etc");
  CHECK(e.mounts[0].host_path == "/run/nvidia/driver/usr/lib/libcuda.so.1");
  CHECK(e.mounts[0].container_path == "/opt/driver/usr/lib/libcuda.so.1");
}

TEST_CASE("a node moved in the container keeps its host path") {
  auto spec = driver_container_spec();
  gcr::transform_cdi_root(spec, transform("/dev/nvidia0", "/dev/nvidia7", "container"));
  const auto& node = spec.devices[0].edits.device_nodes[0];
  CHECK(node.path == "/dev/nvidia7");
  CHECK(node.host_path == "/dev/nvidia0");
}
