#include "driver/host.h"

#include <utility>

namespace gcr {

DriverHost::DriverHost(const Config::Driver& roots, NodeStatFn stat)
    : DriverHost(roots, std::move(stat), system_fs_, system_trust_) {}

DriverHost::DriverHost(const Config::Driver& roots, NodeStatFn stat, HostFs& fs, FileTrust& trust)
    : fs_(fs),
      trust_(trust),
      devices_(roots.dev_root, std::move(stat), fs_, notes_),
      files_(roots.root, devices_, fs_, trust_, notes_) {}

}  // namespace gcr
