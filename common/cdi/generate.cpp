#include "cdi/generate.h"

#include "injection/live_edits.h"

namespace gcr {
namespace {

// Device nodes by path only: their numbers, modes and groups are read from the host when the
// spec is applied. No additionalGids either, which would raise the spec to cdiVersion 0.7.0,
// newer than Debian 12's podman reads.
void paths_only(ContainerEdits& edits) {
  for (auto& node : edits.device_nodes) {
    DeviceNode slim;
    slim.path = node.path;
    if (node.host_path != node.path) slim.host_path = node.host_path;
    node = slim;
  }
  edits.additional_gids.clear();
}

std::string device_name(const Gpu& gpu, const std::string& strategy) {
  if (strategy == "uuid") return gpu.uuid;
  if (strategy == "type-index") return "gpu" + std::to_string(gpu.index);
  return std::to_string(gpu.index);
}

}  // namespace

bool is_cdi_name_strategy(const std::string& strategy) {
  return strategy == "index" || strategy == "uuid" || strategy == "type-index";
}

Result<CdiSpec> generate_cdi_spec(DriverHost& host, const Config& config, const std::string& kind,
                                  const CdiNaming& naming) {
  CdiSpec spec;
  spec.kind = kind;
  auto common = driver_edits(CapabilitySet::all(), host, config);
  if (!common) return common.error();
  paths_only(*common);
  spec.edits = std::move(*common);
  auto gpus = host.gpus();
  if (!gpus) return gpus.error();
  CdiDevice all{"all", {}, {}};
  for (const auto& gpu : *gpus) {
    auto edits = gpu_edits(gpu, host, true);
    if (!edits) return edits.error();
    paths_only(*edits);
    for (const auto& strategy : naming.strategies)
      spec.devices.push_back(CdiDevice{device_name(gpu, strategy), {}, *edits});
    all.edits.append(*edits);
  }
  if (!gpus->empty() && naming.all_device) spec.devices.push_back(std::move(all));
  spec.version = minimum_cdi_version(spec);
  if (auto s = validate_cdi_spec(spec); !s) return s.error().wrap("the generated spec is invalid");
  return spec;
}

}  // namespace gcr
