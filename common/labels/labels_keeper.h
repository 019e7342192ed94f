// gpu-device-plugin's [device-plugin] labels-file, kept current: the labels computed from the
// plugin's discovery on every refresh, the file rewritten only when they change. Nothing is
// written before a GPU is known (never an empty file), so the node's labels stay while the
// plugin restarts and while the driver reloads; a node that has had no GPU for kNoGpuGrace
// (the driver gone, the GPUs taken out) loses the file, as GFD relabels it without them. A
// label Kubernetes would refuse is never written (node_labels leaves it out): a warning, once.
#pragma once

#include <chrono>
#include <optional>
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

inline constexpr std::chrono::seconds kNoGpuGrace{60};  // GFD's relabelling interval

class LabelsKeeper {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LabelsKeeper(const Config& config)
      : config_(config), reader_(config.driver), file_(config.device_plugin.labels_file) {}

  [[nodiscard]] LabelsNews update(const LabelSources& sources, Clock::time_point now);

 private:
  const Config& config_;
  NodeFactsReader reader_;
  LabelsFile file_;
  std::optional<Labels> written_;        // what the file holds, once we know
  std::string error_;                    // the last write's failure, said once
  std::set<std::string> left_out_said_;  // drop_invalid_labels' lines, each said once
  std::optional<Clock::time_point> no_gpu_since_;

  LabelsNews without_gpus(Clock::time_point now);
};

// "nvidia.com/gpu.healthy=7 (was 8), ..." for the labels that differ.
[[nodiscard]] std::string labels_change(const Labels& before, const Labels& after);

}  // namespace gcr
