// Container edits for a request resolved against the live driver: device nodes, driver files
// of the granted capabilities, IPC endpoints, firmware and the ld-cache / symlink hooks.
#pragma once

#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "driver/host.h"
#include "edits/edits.h"
#include "hooks/libraries_request.h"
#include "request/gpu_select.h"
#include "request/request.h"

namespace gcr {

// A host device node; a node usable only through its group brings that group.
void add_device_node(ContainerEdits& edits, DeviceNode node);
// A host file bind-mounted read-only at the same path.
void add_read_only_bind(ContainerEdits& edits, const HostFile& file);

// Container edits and, typed, what the update-libraries hook would be asked (the links to make
// and the library folders, with [hooks] ldconfig): the shim does that work itself at create when
// it can (injection/libraries_at_create.h) and writes the hook only when it cannot.
struct GatheredEdits {
  ContainerEdits edits;
  std::optional<LibrariesRequest> libraries;
};

// The libraries request as its hook (gpu-ctk hook update-libraries), put first among the edits'
// hooks: where the hook stands among the driver's (before disable-device-node-modification).
[[nodiscard]] ContainerEdits with_libraries_hook(GatheredEdits gathered,
                                                 const Config::Hooks& hooks);

// What every container using the driver gets for `caps`: control nodes, libraries, binaries,
// IPC endpoints, firmware, graphics configuration files, the hooks, and the libraries request.
[[nodiscard]] Result<GatheredEdits> driver_edits(const CapabilitySet& caps, DriverHost& host,
                                                 const Config& config);

// One GPU's device node, and with `drm` its /dev/dri nodes.
[[nodiscard]] Result<ContainerEdits> gpu_edits(const Gpu& gpu, DriverHost& host, bool drm);

// The nodes of the IMEX channels, each checked against the host.
[[nodiscard]] Result<ContainerEdits> imex_edits(const std::vector<unsigned>& channels,
                                                DriverHost& host);

// The devices' part of live_edits: gpu_edits of each selected GPU (its DRM nodes with graphics,
// only when it was asked for itself), the access capabilities of the selected MIG devices (of
// every MIG instance with `all`) and the MIG management capabilities. `gpu-ctk cdi generate`
// writes what this gives for each device's ID.
[[nodiscard]] Result<ContainerEdits> device_edits(const GpuRequest& request,
                                                  const Selection& selected, DriverHost& host);

// driver_edits + device_edits.
[[nodiscard]] Result<GatheredEdits> live_edits(const GpuRequest& request, const Selection& selected,
                                               DriverHost& host, const Config& config);

}  // namespace gcr
