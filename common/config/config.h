// The runtime configuration: keys, defaults and validation (PRODUCT.md "Configuration").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "json/strict_json.h"
#include "log/log.h"

namespace gcr {

struct Config {
  struct Runtime {
    std::vector<std::string> runtimes{"runc", "crun"};
    std::string log_file;
    LogLevel log_level = LogLevel::kInfo;
    std::string state_dir = "/run/gpu-container-runtime";  // small caches (the CUDA version)
  } runtime;
  struct Driver {
    std::string root = "/";
    std::string dev_root = "/";
    bool operator==(const Driver&) const = default;
  } driver;
  struct Requests {
    bool accept_env_when_unprivileged = true;
    bool accept_volume_mounts = false;
    std::vector<std::string> annotation_prefixes{"cdi.k8s.io/"};
    std::vector<std::string> supported_capabilities{"compute", "compat32", "display", "graphics",
                                                    "ngx",     "utility",  "video"};
    bool disable_require = false;
    std::string mode =
        "auto";  // "auto": unqualified IDs from the live driver; "cdi": <default-kind>=<id>
    // The image's CUDA forward-compatibility folder, loaded first when its libcuda is newer
    // than the host's driver; "" = off.
    std::string cuda_compat_dir = "/usr/local/cuda/compat";
    // Docker Swarm's generic-resource variables (DOCKER_RESOURCE_GPU): when a container's
    // environment sets any of them, they name its GPUs instead of NVIDIA_VISIBLE_DEVICES.
    std::vector<std::string> swarm_resource;
  } requests;
  struct Cdi {
    std::vector<std::string> spec_dirs{"/etc/cdi", "/var/run/cdi"};
    std::string default_kind = "nvidia.com/gpu";
  } cdi;
  struct Hooks {
    std::string ctk_path = "/usr/bin/gpu-ctk";
    std::string ldconfig = "@/sbin/ldconfig";
  } hooks;

  struct DevicePlugin {
    std::string kubelet_dir = "/var/lib/kubelet/device-plugins";
    std::string resource_name = "nvidia.com/gpu";
    std::string device_ids = "uuid";                 // uuid | index
    std::vector<std::string> device_list{"envvar"};  // envvar | volume-mounts | cdi-*
    std::int64_t replicas = 1;
    // Per GPU, over `replicas`: by index ("0"), else by model as the driver names it
    // ("NVIDIA A100-SXM4-40GB").
    std::map<std::string, std::int64_t> replicas_by_gpu;
    bool replicas_on_distinct_gpus = true;
    // none | time-slicing | mps; with none, replicas > 1 is time-slicing (the older keys).
    std::string sharing = "none";
    // MPS: each resource's control-daemon pipe, log and shared-memory directories below it.
    std::string mps_root = "/run/gpu-container-runtime/mps";

    // How many times the GPU of `index` and `model` is advertised: replicas-by-gpu by its
    // index, else by its model, else replicas.
    [[nodiscard]] std::int64_t replicas_for(unsigned index, const std::string& model) const;
    // Whether any GPU may be advertised more than once.
    [[nodiscard]] bool shares_gpus() const;
    // Whether Allocate hands out CDI device names (device-list cdi-annotations or cdi-cri),
    // which a spec on the node must define.
    [[nodiscard]] bool hands_out_cdi_names() const;
    // The node's labels in NFD's local feature-file format; "" = none written.
    std::string labels_file =
        "/etc/kubernetes/node-feature-discovery/features.d/gpu-container-runtime";
    std::string mig_strategy = "none";    // none | single | mixed
    std::string allocation = "topology";  // topology | packed | distributed
    bool health = true;
    std::vector<std::int64_t> ignored_xids;  // on top of NVIDIA's application-level set
    // The default IMEX channel (channel 0) for every container given GPUs: disabled | auto
    // (when its device node is on the node) | enabled (refused while it is not).
    std::string imex_channel = "disabled";
    bool operator==(const DevicePlugin&) const = default;
  } device_plugin;

  std::string source;  // the file it was read from; "" for built-in defaults

  // Whether GPUs are shared through NVIDIA's MPS ([device-plugin] sharing = "mps").
  [[nodiscard]] bool mps() const { return device_plugin.sharing == "mps"; }
  [[nodiscard]] std::int64_t replicas_for(unsigned index, const std::string& model) const {
    return device_plugin.replicas_for(index, model);
  }
};

// [requests] swarm-resource: environment variable names (a container's `NAME=value` entries are
// matched by them), each once, none of the runtime's own NVIDIA_* variables but
// NVIDIA_VISIBLE_DEVICES.
[[nodiscard]] Status check_swarm_resource(const std::vector<std::string>& names);

// An extended resource name the kubelet accepts: <DNS subdomain>/<name>, not in kubernetes.io.
[[nodiscard]] bool is_extended_resource_name(const std::string& name);

// gpu-device-plugin's socket file in the kubelet's directory, one per resource
// ("gpu-device-plugin-nvidia.com-gpu.sock"), and the annotation key of its cdi-annotations
// strategy ("cdi.k8s.io/gpu-device-plugin_nvidia.com_gpu"). The plugin and gpu-ctk doctor share
// them.
[[nodiscard]] std::string plugin_socket_name(const std::string& resource_name);
[[nodiscard]] std::string plugin_cdi_annotation_key(const std::string& resource_name);

// Builds a Config from a document with the config file's shape ({"runtime": {...}, ...}).
// Unknown tables or keys, wrong types and invalid values are errors naming the key.
[[nodiscard]] Result<Config> config_from_json(const Json& doc);

// The default configuration file shipped in etc/config.toml, byte for byte.
[[nodiscard]] const std::string& default_config_toml();

}  // namespace gcr
