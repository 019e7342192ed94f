// Matching requested device IDs against the host's GPUs and MIG devices.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "driver/device_nodes.h"
#include "driver/probe.h"
#include "request/request.h"

namespace gcr {

struct MigSelection {
  Gpu gpu;  // the parent
  MigDevice mig;
};

struct Selection {
  std::vector<Gpu> gpus;           // in index order; parents of selected MIG devices included
  std::vector<MigSelection> migs;  // MIG devices asked for by MIG-<uuid> or <gpu>:<mig>
  std::set<unsigned> whole;        // indices of the GPUs asked for themselves, not only as parents
};

// The MIG devices `nvml` (NVML's answers by GPU UUID) lists for a GPU; none when MIG is off.
[[nodiscard]] const std::vector<MigDevice>& mig_devices_of(
    const Gpu& gpu, const std::map<std::string, GpuFacts>& nvml);

// True for the forms that name a MIG device (MIG-<uuid>, <gpu>:<mig>).
[[nodiscard]] bool is_mig_id(const std::string& id);

// The host's GPUs as a selection reads them: their bus ids in index order, one GPU, all.
class GpuSource {
 public:
  virtual ~GpuSource() = default;
  [[nodiscard]] virtual Result<std::vector<PciAddress>> buses() = 0;
  [[nodiscard]] virtual Result<Gpu> at(unsigned index) = 0;
  [[nodiscard]] virtual Result<std::vector<Gpu>> all() = 0;
};

// The GPUs a request names. An ID may be a GPU index, a GPU-<uuid>, a PCI bus id, a
// MIG-<uuid> or <gpu>:<mig>; MIG forms need `nvml` (each GPU's MIG devices by GPU UUID). An
// ID that matches nothing is an error naming it (a request never widens to all GPUs). Only
// `all`, UUIDs and MIG forms read every GPU.
[[nodiscard]] Result<Selection> select_gpus(const GpuRequest& request, GpuSource& gpus,
                                            const std::map<std::string, GpuFacts>* nvml);
// The same from a table read whole.
[[nodiscard]] Result<Selection> select_gpus(const GpuRequest& request, const std::vector<Gpu>& gpus,
                                            const std::map<std::string, GpuFacts>* nvml);
// The same from the driver, each GPU's information file read when it is needed (the entries'
// names give the bus order); when a name is not the bus its file gives, from every GPU's.
[[nodiscard]] Result<Selection> select_gpus(const GpuRequest& request, DeviceNodes& nodes,
                                            const std::map<std::string, GpuFacts>* nvml);

}  // namespace gcr
