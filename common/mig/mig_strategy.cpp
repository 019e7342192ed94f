#include "mig/mig_strategy.h"

#include <algorithm>
#include <set>

#include "base/text.h"

namespace gcr {
namespace {

std::string named(const MigGpu& gpu) {
  return "GPU " + std::to_string(gpu.index) + " (" + gpu.uuid + ")";
}

bool has_migs(const MigGpu& gpu) {
  return gpu.migs != nullptr && !gpu.migs->empty();
}

}  // namespace

Result<SingleLayout> single_layout(const std::vector<MigGpu>& gpus) {
  const auto in_mode = std::find_if(gpus.begin(), gpus.end(), in_mig_mode);
  if (in_mode == gpus.end()) return SingleLayout::kWholeGpus;
  std::set<std::string> profiles;
  for (const auto& gpu : gpus) {
    if (!in_mig_mode(gpu))
      return Error{named(gpu) + " is not in MIG mode while " + named(*in_mode) + " is; use mixed"};
    if (!has_migs(gpu)) return Error{named(gpu) + " is in MIG mode with no MIG devices"};
    for (const auto& m : *gpu.migs) profiles.insert(m.profile());
  }
  if (profiles.size() > 1)
    return Error{"the GPUs have MIG devices of several profiles (" +
                 join(std::vector<std::string>(profiles.begin(), profiles.end()), ", ") +
                 "); use mixed"};
  return SingleLayout::kMigDevices;
}

MigModes read_mig_modes(Nvml& nvml, const std::vector<Gpu>& gpus) {
  MigModes out;
  for (const auto& gpu : gpus) {
    auto list = nvml.mig_devices(gpu.bus);
    const auto mode = list.empty() ? nvml.mig_mode(gpu.bus) : std::optional<bool>(true);
    if (!mode) out.unknown.insert(gpu.uuid);
    if (mode.value_or(false)) out.in_mig_mode[gpu.uuid] = std::move(list);
  }
  return out;
}

std::string mig_mode_marks(Nvml& nvml, const std::vector<Gpu>& gpus) {
  std::string out;
  for (const auto& gpu : gpus) {
    const auto mode = nvml.mig_mode(gpu.bus);
    out += !mode ? '?' : *mode ? '1' : '0';
  }
  return out;
}

}  // namespace gcr
