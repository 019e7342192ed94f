#include "driver/host.h"

#include <utility>

namespace gcr {

DriverHost::DriverHost(const Config::Driver& roots, NodeStatFn stat)
    : devices_(roots.dev_root, std::move(stat), system_fs_, notes_),
      files_(roots.root, devices_, system_fs_, system_trust_, notes_) {}

DriverHost::DriverHost(const Config::Driver& roots, NodeStatFn stat, HostFs& fs, FileTrust& trust)
    : devices_(roots.dev_root, std::move(stat), fs, notes_),
      files_(roots.root, devices_, fs, trust, notes_) {}

}  // namespace gcr
