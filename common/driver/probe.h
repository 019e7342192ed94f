// Facts that need the driver's user-space libraries loaded: the CUDA driver version (libcuda)
// and each GPU's architecture and brand (NVML). The shim never loads driver libraries into
// itself: it asks `gpu-ctk info --json` in a child process, only when a requirement needs it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "config/config.h"

namespace gcr {

// A MIG device's share of its GPU, as NVML's device attributes give it (GFD's MIG labels).
struct MigAttributes {
  unsigned multiprocessors = 0;
  unsigned compute_slices = 0;  // its compute instance's slices
  unsigned copy_engines = 0, decoders = 0, encoders = 0, jpegs = 0, ofas = 0;
};

// One MIG device as NVML numbers it on its GPU.
struct MigDevice {
  unsigned index = 0;  // position on its GPU: the <mig> of "<gpu>:<mig>"
  std::string uuid;    // MIG-...
  unsigned gpu_instance = 0;
  unsigned compute_instance = 0;
  unsigned gpu_slices = 0;           // the profile's size: 1 for 1g.5gb
  unsigned long long memory_mb = 0;  // its memory
  MigAttributes attributes;          // what NVML says of its share of the GPU

  unsigned long long gpu_memory_bytes = 0;  // its GPU's total memory (NVML); 0 when not known
  std::string profile_suffix;  // ".me", "-me", ".me.all", ".gfx" for those GPU instance profiles

  // NVIDIA's name of its profile (go-nvlib's): "<G>g.<GB>gb", "<C>c.<G>g.<GB>gb" when its
  // compute instance has fewer slices than its GPU instance. GB is its memory rounded up to the
  // next eighth of the GPU's, times the GPU's memory in GiB rounded up (1g.18gb on an H200 of
  // 143771 MiB); without the GPU's memory, its own in GiB rounded up. Then the suffix of a
  // media-extension or graphics profile, '+' written '.' as in resource names: "1g.5gb.me".
  [[nodiscard]] std::string profile() const;
  // Its compute instance has all its GPU instance's slices (or NVML did not say): only such
  // devices are resources under mig-strategy mixed, as in NVIDIA's plugin.
  [[nodiscard]] bool whole_gpu_instance() const {
    return attributes.compute_slices == 0 || attributes.compute_slices == gpu_slices;
  }
};

struct GpuFacts {
  std::optional<std::string> arch;   // compute capability, "8.0"
  std::optional<std::string> brand;  // "Tesla", "GeForce", ...
  std::vector<MigDevice> migs;       // empty when MIG is off
};

struct ProbeAnswers {
  std::optional<std::string> cuda;       // "12.4"; nullopt when no libcuda answered
  std::map<std::string, GpuFacts> gpus;  // by GPU UUID; empty when NVML is unavailable
};

class DriverProbe {
 public:
  virtual ~DriverProbe() = default;
  // The CUDA driver version; nullopt when the host has no libcuda to ask.
  [[nodiscard]] virtual Result<std::optional<std::string>> cuda_version(
      const std::string& driver_version) = 0;
  // Each GPU's architecture, brand and MIG devices, by UUID; empty when NVML is unavailable.
  [[nodiscard]] virtual Result<std::map<std::string, GpuFacts>> gpu_facts() = 0;
};

// The probe that runs `<[hooks] ctk-path> info --json` with the configured roots. The CUDA
// version is remembered in <[runtime] state-dir>/cuda-version.json per driver root and
// driver version, so loading libcuda happens once per driver, not once per container; the
// NVML answers are kept for the rest of the call (MIG IDs and requirements both use them).
class CtkProbe : public DriverProbe {
 public:
  explicit CtkProbe(const Config& config) : config_(config) {}
  Result<std::optional<std::string>> cuda_version(const std::string& driver_version) override;
  Result<std::map<std::string, GpuFacts>> gpu_facts() override;

 private:
  Result<ProbeAnswers> ask(const char* what);
  const Config& config_;
  std::optional<Result<std::map<std::string, GpuFacts>>> gpu_facts_;  // NVML is asked once
};

// Reads the JSON `gpu-ctk info --json` prints.
[[nodiscard]] Result<ProbeAnswers> parse_probe_answers(const std::string& json_text);

}  // namespace gcr
