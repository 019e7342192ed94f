// The administrator's rules applied to the merged edits, whatever the request's form (IDs,
// CDI names, annotations, volume markers): files of driver capabilities missing from
// [requests] supported-capabilities are withheld, every hook program must be one only root can
// change, and the MIG management capabilities go to privileged containers only.
#pragma once

#include <string>
#include <vector>

#include "base/node_stat.h"
#include "base/result.h"
#include "base/trust.h"
#include "config/config.h"
#include "driver/device_nodes.h"
#include "edits/edits.h"
#include "log/log.h"

namespace gcr {

// Removes the mounts and device nodes that only capabilities outside `supported` bring
// (driver/files.h decides which file belongs to which), and the hooks' links to them, which
// would dangle; says what it withheld in the log.
void withhold_unsupported_capabilities(ContainerEdits& edits,
                                       const std::vector<std::string>& supported,
                                       const Logger& logger);

// Each hook's program is absolute, exists, and only root can change it or the directories on
// its path; the error names the program and why.
[[nodiscard]] Status check_hook_programs(const ContainerEdits& edits, FileTrust& trust);

// The MIG config and monitor capabilities are a privileged container's only, as
// NVIDIA_MIG_CONFIG_DEVICES and NVIDIA_MIG_MONITOR_DEVICES are: an error when `edits` (a CDI
// device's: NVIDIA's management spec holds both) hold the node of either, matched by its device
// numbers (the edits' own, or `stat` of its host path). Nothing to check where the driver has
// no MIG capabilities.
[[nodiscard]] Status check_no_mig_management(const ContainerEdits& edits, DeviceNodes& devices,
                                             const NodeStatFn& stat);

}  // namespace gcr
