// The host's NVIDIA driver from [driver] root and dev-root, in two halves: DeviceNodes (the
// version, the GPUs and their device nodes, from dev-root) and DriverRootFiles (libraries,
// programs, configuration files, modules, IPC endpoints and firmware, from the root). Both
// read the host through one HostFs and add to one Notes.
#pragma once

#include "base/node_stat.h"
#include "base/trust.h"
#include "config/config.h"
#include "driver/device_nodes.h"
#include "driver/host_fs.h"
#include "driver/notes.h"
#include "driver/root_files.h"

namespace gcr {

class DriverHost {
 public:
  // Discovery on the real host: SystemFs, and TrustCheck for the driver's files.
  DriverHost(const Config::Driver& roots, NodeStatFn stat);
  // Discovery through `fs` and `trust` (a unit test's in-memory host).
  DriverHost(const Config::Driver& roots, NodeStatFn stat, HostFs& fs, FileTrust& trust);
  DriverHost(const DriverHost&) = delete;
  DriverHost& operator=(const DriverHost&) = delete;

  [[nodiscard]] DeviceNodes& devices() { return devices_; }
  [[nodiscard]] const DeviceNodes& devices() const { return devices_; }
  [[nodiscard]] DriverRootFiles& files() { return files_; }
  [[nodiscard]] const DriverRootFiles& files() const { return files_; }
  [[nodiscard]] Notes& notes() { return notes_; }
  // What files() reads the host through and judges its files with.
  [[nodiscard]] HostFs& fs() { return fs_; }
  [[nodiscard]] FileTrust& trust() { return trust_; }
  // Whether that is the real host (SystemFs and TrustCheck), not a unit test's.
  [[nodiscard]] bool on_system() const { return &fs_ == &system_fs_; }

 private:
  SystemFs system_fs_;
  TrustCheck system_trust_;
  HostFs& fs_;
  FileTrust& trust_;
  Notes notes_;
  DeviceNodes devices_;
  DriverRootFiles files_;
};

}  // namespace gcr
