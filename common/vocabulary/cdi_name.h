// CDI device names: "vendor/class=name" (reference/cdi.md §5).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gcr {

// The vendor of NVIDIA's management spec (gpu-ctk cdi generate --mode management).
inline constexpr std::string_view kManagementVendor = "management.nvidia.com";

// NVIDIA's just-in-time names: `runtime.nvidia.com/gpu=<id>` is the host's GPU <id> as the
// live driver names it (an index, a UUID, a MIG device, all or none), no spec file involved.
inline constexpr std::string_view kJitCdiPrefix = "runtime.nvidia.com/gpu=";

struct QualifiedName {
  std::string vendor;
  std::string device_class;
  std::string name;
  [[nodiscard]] std::string kind() const { return vendor + "/" + device_class; }
  [[nodiscard]] std::string to_string() const { return kind() + "=" + name; }
};

[[nodiscard]] bool is_valid_vendor(std::string_view s);
[[nodiscard]] bool is_valid_class(std::string_view s);
[[nodiscard]] bool is_valid_device_name(std::string_view s);

// "vendor/class" split at the first '/', both parts valid.
[[nodiscard]] bool is_valid_kind(std::string_view kind);

// Splits at the first '=' and the first '/', validating each part. nullopt when `text` is not
// a qualified name (for example an index, a UUID or a host path such as /dev/nvidia0).
[[nodiscard]] std::optional<QualifiedName> parse_qualified_name(std::string_view text);

}  // namespace gcr
