// MIG strategies: what a node's MIG layout is advertised as. With single, every GPU's MIG
// devices stand for nvidia.com/gpu; the rules for when that holds are NVIDIA's device
// plugin's, which GFD's labels follow.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "driver/device_nodes.h"
#include "driver/nvml.h"
#include "driver/probe.h"

namespace gcr {

// One GPU as a MIG strategy sees it.
struct MigGpu {
  unsigned index = 0;
  std::string uuid;
  bool mig_mode = false;                         // in MIG mode now
  const std::vector<MigDevice>* migs = nullptr;  // its MIG devices; null or empty: none
};

// In MIG mode: said so, or with MIG devices listed.
[[nodiscard]] inline bool in_mig_mode(const MigGpu& gpu) {
  return gpu.mig_mode || (gpu.migs != nullptr && !gpu.migs->empty());
}

enum class SingleLayout {
  kWholeGpus,   // no GPU in MIG mode: whole GPUs, as with mig-strategy none
  kMigDevices,  // every GPU in MIG mode, with MIG devices of one profile
};

// mig-strategy single over the node's GPUs (in index order): whole GPUs when none is in MIG
// mode, MIG devices when all are and one profile is made on them; else an error naming the
// GPU or the profiles ("GPU 1 (GPU-...) is not in MIG mode while GPU 0 (GPU-...) is").
[[nodiscard]] Result<SingleLayout> single_layout(const std::vector<MigGpu>& gpus);

struct MigModes {
  // Each GPU in MIG mode (by UUID) with its MIG devices as NVML lists them, maybe none yet.
  std::map<std::string, std::vector<MigDevice>> in_mig_mode;
  std::set<std::string> unknown;  // the GPUs NVML could not tell the mode of (lost, being reset)
};

[[nodiscard]] MigModes read_mig_modes(Nvml& nvml, const std::vector<Gpu>& gpus);

// Each GPU's MIG mode as NVML says it now, one character each ('1', '0', '?'), to notice a
// mode changed with no MIG device made or removed.
[[nodiscard]] std::string mig_mode_marks(Nvml& nvml, const std::vector<Gpu>& gpus);

}  // namespace gcr
