// NVML, the driver's own libnvidia-ml.so.<version> loaded from the driver root with dlopen,
// as a session that stays open while the object lives (gpu-ctk asks once; gpu-device-plugin
// keeps it for topology, MIG devices and Xid events). Every function is looked up when the
// library is opened; a question whose function is missing fails alone.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "driver/probe.h"
#include "driver/proc.h"

namespace gcr {

// NVML's common-ancestor levels (nvmlGpuTopologyLevel_t).
enum class PcieRelation : int {
  kSameBoard = 0,
  kSingleSwitch = 10,
  kMultipleSwitches = 20,
  kHostBridge = 30,
  kSameNuma = 40,
  kSystem = 50,
};

// One active NVLink: to another GPU (its PCI address) or to an NVSwitch.
struct NvLink {
  bool to_switch = false;
  PciAddress remote;
};

// A critical-Xid event.
struct XidEvent {
  std::optional<PciAddress> gpu;  // none when NVML names a device we did not register
  unsigned long long xid = 0;
  std::optional<unsigned> gpu_instance;  // set when it concerns one MIG instance
  std::optional<unsigned> compute_instance;
};

// Where a GPU stands in a multi-node NVLink fabric (GB200 NVL72's), as NVML's GPU fabric info
// says: attached once its registration completed without error in a cluster (a non-zero UUID).
struct GpuFabric {
  enum class State { kNotAttached, kRegistering, kAttached } state = State::kNotAttached;
  std::string cluster_uuid;  // kAttached: "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  unsigned clique = 0;       // kAttached: the fabric clique (its NVLink partition) in the cluster
};

// Whether an nvmlInit status says the kernel module is missing or not the libraries' version
// (NVML_ERROR_DRIVER_NOT_LOADED, NVML_ERROR_LIB_RM_VERSION_MISMATCH), not the libraries.
[[nodiscard]] bool nvml_kernel_driver_failure(int status);

class Nvml {
 public:
  // Loads and initialises NVML. A failed nvmlInit is reported with NVML's own words, and its
  // status stored in `init_status` when given.
  [[nodiscard]] static Result<std::unique_ptr<Nvml>> open(const std::string& library_path,
                                                          int* init_status = nullptr);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // Compute capability ("8.0") and brand ("Tesla") of a GPU.
  [[nodiscard]] std::optional<std::string> arch(const PciAddress& gpu);
  [[nodiscard]] std::optional<std::string> brand(const PciAddress& gpu);
  // The GPU's total memory in MiB.
  [[nodiscard]] std::optional<unsigned long long> memory_mib(const PciAddress& gpu);
  // Whether the GPU can run MIG (NVML reports a MIG mode for it), whatever its mode now.
  [[nodiscard]] std::optional<bool> mig_capable(const PciAddress& gpu);
  // Whether the GPU is in MIG mode now (false for one that cannot run MIG, or a driver older
  // than MIG); nullopt when NVML does not answer for it (lost, being reset).
  [[nodiscard]] std::optional<bool> mig_mode(const PciAddress& gpu);
  // The GPU's place in a multi-node NVLink fabric: not attached where NVML has no fabric
  // (NOT_SUPPORTED, a driver without the function, no cluster); nullopt when NVML does not
  // answer for the GPU.
  [[nodiscard]] std::optional<GpuFabric> fabric(const PciAddress& gpu);
  // The GPU's compute mode (NVML_COMPUTEMODE_*: 0 Default, 1 Exclusive_Thread, 2 Prohibited,
  // 3 Exclusive_Process); nullopt when NVML does not answer.
  [[nodiscard]] std::optional<unsigned> compute_mode(const PciAddress& gpu);
  // The newest CUDA version the driver supports ("12.4").
  [[nodiscard]] std::optional<std::string> cuda_version();
  // The GPU's MIG devices by NVML index (empty when MIG is off), with their profiles.
  [[nodiscard]] std::vector<MigDevice> mig_devices(const PciAddress& gpu);

  // The GPU's active NVLinks; an error when NVML cannot say.
  [[nodiscard]] Result<std::vector<NvLink>> nvlinks(const PciAddress& gpu);
  [[nodiscard]] Result<PcieRelation> common_ancestor(const PciAddress& a, const PciAddress& b);

  // Critical-Xid events of `gpus`: register once, then wait (up to `timeout_ms`) for one. A
  // GPU NVML cannot watch (NOT_SUPPORTED on some boards) is left out, named in the list
  // returned ("<bus> (NVML error <n>)"); the error is that none can be watched.
  [[nodiscard]] Result<std::vector<std::string>> watch_xids(const std::vector<PciAddress>& gpus);
  [[nodiscard]] Result<std::optional<XidEvent>> wait_xid(unsigned timeout_ms);

  // Whether NVML gets a handle to the GPU and its UUID now (false while it is lost or reset).
  [[nodiscard]] bool answers(const PciAddress& gpu);

 private:
  struct Api;
  explicit Nvml(std::unique_ptr<Api> api);
  void* handle(const PciAddress& gpu);
  // The GPU's instance profiles: NVML's profile ID -> its NVML_GPU_INSTANCE_PROFILE_* number.
  std::map<unsigned, unsigned> instance_profiles(void* device);
  // The name suffix of the profile of the GPU instance `gpu_instance` ("" when not known).
  std::string profile_suffix_of(void* device, unsigned gpu_instance,
                                const std::map<unsigned, unsigned>& profiles);
  std::unique_ptr<Api> api_;
};

// "00000000:3b:00.0", the form NVML takes bus IDs in.
[[nodiscard]] std::string nvml_bus_id(const PciAddress& bus);

}  // namespace gcr
