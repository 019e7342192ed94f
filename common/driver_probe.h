// Facts that need the driver's user-space libraries loaded: the CUDA driver version (libcuda)
// and each GPU's architecture and brand (NVML). The shim never loads driver libraries into
// itself: it asks `gpu-ctk info --json` in a child process, only when a requirement needs it.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "config.h"
#include "result.h"

namespace gcr {

struct GpuFacts {
  std::optional<std::string> arch;   // compute capability, "8.0"
  std::optional<std::string> brand;  // "Tesla", "GeForce", ...
};

struct ProbeAnswers {
  std::optional<std::string> cuda;       // "12.4"; nullopt when no libcuda answered
  std::map<std::string, GpuFacts> gpus;  // by GPU UUID; empty when NVML is unavailable
};

class DriverProbe {
 public:
  virtual ~DriverProbe() = default;
  [[nodiscard]] virtual Result<ProbeAnswers> query(bool cuda, bool nvml) = 0;
};

// The probe that runs `<[hooks] ctk-path> info --json` with the configured roots.
class CtkProbe : public DriverProbe {
 public:
  explicit CtkProbe(const Config& config) : config_(config) {}
  Result<ProbeAnswers> query(bool cuda, bool nvml) override;

 private:
  const Config& config_;
};

// Reads the JSON `gpu-ctk info --json` prints.
[[nodiscard]] Result<ProbeAnswers> parse_probe_answers(const std::string& json_text);

}  // namespace gcr
