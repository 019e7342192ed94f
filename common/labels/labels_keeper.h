// gpu-device-plugin's [device-plugin] labels-file, kept current: the labels computed from the
// plugin's discovery on every refresh, the file rewritten only when they change. Nothing is
// written before a GPU is known (never an empty file), and nothing is ever removed, so the
// node's labels stay while the plugin restarts. A label Kubernetes would refuse is never
// written (node_labels leaves it out): a warning, once.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "labels/labels.h"
#include "labels/labels_file.h"
#include "labels/node_facts.h"

namespace gcr {

// What happened, for the log: each line once.
struct LabelsNews {
  std::vector<std::string> info;
  std::vector<std::string> warnings;
};

class LabelsKeeper {
 public:
  explicit LabelsKeeper(const Config& config)
      : config_(config), reader_(config.driver), file_(config.device_plugin.labels_file) {}

  [[nodiscard]] LabelsNews update(const LabelSources& sources);

 private:
  const Config& config_;
  NodeFactsReader reader_;
  LabelsFile file_;
  std::optional<Labels> written_;        // what the file holds, once we know
  std::string error_;                    // the last write's failure, said once
  std::set<std::string> left_out_said_;  // drop_invalid_labels' lines, each said once
};

// "nvidia.com/gpu.healthy=7 (was 8), ..." for the labels that differ.
[[nodiscard]] std::string labels_change(const Labels& before, const Labels& after);

}  // namespace gcr
