#include "injection/gated_devices.h"

#include <sys/stat.h>

#include "injection/live_edits.h"

namespace gcr {
namespace {

struct NodePattern {
  const char* dir;
  const char* name;
};

struct FeatureFiles {
  std::vector<NodePattern> nodes;
  std::vector<std::pair<const char*, mode_t>> files;  // mounted when the nodes exist
};

const FeatureFiles& files_of(GatedFeature feature) {
  static const FeatureFiles gds{{{"/dev", "nvidia-fs*"}},
                                {{"/run/udev", S_IFDIR}, {"/etc/cufile.json", S_IFREG}}};
  static const FeatureFiles mofed{{{"/dev/infiniband", "uverbs*"}, {"/dev/infiniband", "rdma_cm"}},
                                  {}};
  static const FeatureFiles gdrcopy{{{"/dev", "gdrdrv"}}, {}};
  static const FeatureFiles nvswitch{{{"/dev", "nvidia-nvswitch*"}}, {}};
  switch (feature) {
    case GatedFeature::kGds:
      return gds;
    case GatedFeature::kMofed:
      return mofed;
    case GatedFeature::kGdrcopy:
      return gdrcopy;
    case GatedFeature::kNvswitch:
      break;
  }
  return nvswitch;
}

std::string patterns_text(const std::vector<NodePattern>& patterns) {
  std::string text;
  for (const auto& p : patterns)
    text += (text.empty() ? "" : ", ") + std::string(p.dir) + "/" + p.name;
  return text;
}

}  // namespace

Result<ContainerEdits> gated_feature_edits(GatedFeature feature, DriverHost& host) {
  const FeatureFiles& wanted = files_of(feature);
  ContainerEdits edits;
  for (const auto& pattern : wanted.nodes) {
    for (auto& node : host.devices().char_nodes(pattern.dir, pattern.name))
      add_device_node(edits, std::move(node));
  }
  if (edits.device_nodes.empty()) {
    return Error{std::string(gated_feature_variable(feature)) + "=enabled: no device node " +
                 patterns_text(wanted.nodes) + " (" + host.devices().dev_path("/dev") + ")"};
  }
  for (const auto& [path, type] : wanted.files) {
    if (auto file = host.files().driver_file(path, type)) add_read_only_bind(edits, *file);
  }
  return edits;
}

}  // namespace gcr
