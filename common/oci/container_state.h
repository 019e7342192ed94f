// The OCI state a runtime writes to a hook's stdin, and the container rootfs it points at.
#pragma once

#include <optional>
#include <string>

#include "base/result.h"
#include "oci/spec_io.h"

namespace gcr {

inline constexpr std::size_t kMaxStateBytes = 16u << 20;

struct ContainerState {
  std::string bundle;               // "bundle" (or the legacy "bundlePath")
  std::optional<std::string> root;  // non-standard "root" some runtimes add (crun)
};

[[nodiscard]] Result<ContainerState> parse_container_state(const std::string& text);

// The rootfs: the state's "root" when given, else root.path of <bundle>/config.json
// (relative paths are relative to the bundle, as for runc).
[[nodiscard]] Result<std::string> container_rootfs(const ContainerState& state);
// The same, with the bundle's config.json already read.
[[nodiscard]] Result<std::string> container_rootfs(const ContainerState& state,
                                                   const BundleSpec& bundle);

// Reads the state from stdin (size-capped).
[[nodiscard]] Result<ContainerState> read_container_state_from_stdin();

}  // namespace gcr
