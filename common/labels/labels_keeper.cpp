#include "labels/labels_keeper.h"

#include <string>

namespace gcr {

LabelsNews LabelsKeeper::without_gpus(Clock::time_point now) {
  LabelsNews news;
  if (!no_gpu_since_) no_gpu_since_ = now;
  if (now - *no_gpu_since_ < kNoGpuGrace) return news;
  const auto removed = file_.remove();
  if (!removed) {
    if (error_ != removed.error().message) news.warnings.push_back(removed.error().message);
    error_ = removed.error().message;
    return news;
  }
  error_.clear();
  if (*removed)
    news.info.push_back("labels file " + file_.path() + " removed: no GPU for " +
                        std::to_string(kNoGpuGrace.count()) + " s");
  written_.reset();
  return news;
}

LabelsNews LabelsKeeper::update(const LabelSources& sources, Clock::time_point now) {
  if (file_.path().empty()) return {};
  if (sources.gpus.empty()) return without_gpus(now);
  no_gpu_since_.reset();
  LabelsNews news;
  std::vector<std::string> left_out;
  const Labels labels = node_labels(reader_.read(sources), config_.device_plugin, &left_out);
  for (auto& line : left_out) {
    if (left_out_said_.insert(line).second) news.warnings.push_back(std::move(line));
  }
  const auto written = file_.keep(labels_text(labels));
  if (!written) {
    if (error_ != written.error().message) news.warnings.push_back(written.error().message);
    error_ = written.error().message;
    return news;
  }
  error_.clear();
  const std::string count = std::to_string(labels.size()) + " labels";
  if (written_ == labels) {
    if (*written)
      news.info.push_back("labels written again to " + file_.path() + " (" + count +
                          "): it had been removed or changed");
  } else if (!written_) {
    news.info.push_back((*written ? "labels written to " : "labels in ") + file_.path() + " (" +
                        count + (*written ? ")" : ", unchanged)"));
  } else {
    news.info.push_back("labels rewritten in " + file_.path() + ": " +
                        labels_change(*written_, labels));
  }
  written_ = labels;
  return news;
}

std::string labels_change(const Labels& before, const Labels& after) {
  std::string out;
  const auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  for (const auto& [name, value] : after) {
    const auto was = before.find(name);
    if (was == before.end())
      add(name + "=" + value + " (new)");
    else if (was->second != value)
      add(name + "=" + value + " (was " + was->second + ")");
  }
  for (const auto& [name, value] : before) {
    if (after.count(name) == 0) add(name + " (gone)");
  }
  return out;
}

}  // namespace gcr
