#include "doctor/doctor.h"

#include "doctor/cdi_checks.h"
#include "doctor/dev_char_checks.h"
#include "doctor/driver_checks.h"
#include "doctor/engine_checks.h"
#include "doctor/kubernetes_checks.h"
#include "doctor/mps_checks.h"
#include "doctor/nvidia_config_checks.h"
#include "doctor/run_check.h"
#include "doctor/runtime_checks.h"

namespace gcr {

Findings run_doctor(const DoctorOptions& options) {
  Findings findings;
  const Config config = check_config(options.config_path, findings);
  const auto driver_version = check_driver(config, findings);
  check_dev_char(config, findings);
  const auto runtime = check_runtime(config, findings);
  check_nvidia_config(config, options.nvidia_config, findings);
  const CdiRegistry registry = load_cdi_registry(config.cdi.spec_dirs);
  for (const auto& engine : engines_to_check(options)) {
    if (engine == "docker") check_docker(options, findings);
    if (engine == "containerd") check_containerd(options, findings);
    if (engine == "crio") check_crio(options, findings);
    if (engine == "podman") check_podman(config, registry, findings);
  }
  check_cdi(config, registry, driver_version, findings);
  check_kubernetes(config, options, findings);
  check_mps(config, findings);
  if (options.run)
    check_run(config, RunCheck{runtime, options.shim_path, options.probe_path, options.gpus},
              findings);
  return findings;
}

}  // namespace gcr
