// The driver root's files for a request's capabilities, kept between calls: a create on a
// host whose driver files have not changed reads what an earlier create found instead of
// looking up and vetting each file again (issue 44). What is kept is used only while every
// file and directory discovery consulted (each part of each path, through symlinks, from /)
// still has its stamp (path_stamps.h), and only for the driver root, driver version,
// capabilities and shim build (the executable's device, inode, size and times) it was found
// with; nothing is kept that was found from a path changed during discovery or less than
// kRacyWindowSeconds before it. It lives in `[runtime] state-dir`/discovery (0700), read only
// when owned by us and writable by nobody else. IPC endpoints and device nodes are always read
// live.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "driver/host.h"
#include "vocabulary/capabilities.h"

namespace gcr {

// host.files().file_set(caps), from the cache in `state_dir`/discovery when it holds, else
// found and kept there when it may be; the notes discovery made are added to host.notes()
// either way, with a debug line saying which it was. A unit test's host (not on_system()) and
// an empty `state_dir` are never cached.
[[nodiscard]] Result<DriverFileSet> cached_file_set(const CapabilitySet& caps, DriverHost& host,
                                                    const std::string& state_dir);

// The file set and the notes that came with it, as the cache keeps them, and back.
[[nodiscard]] std::string encode_file_set(const DriverFileSet& set,
                                          const std::vector<std::string>& notes);
struct DecodedFileSet {
  DriverFileSet set;
  std::vector<std::string> notes;
};
[[nodiscard]] std::optional<DecodedFileSet> decode_file_set(const std::string& payload);

}  // namespace gcr
