// Driver capabilities (NVIDIA_DRIVER_CAPABILITIES) and sets of them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gcr {

enum class Capability : std::uint8_t {
  kCompute,
  kCompat32,
  kDisplay,
  kGraphics,
  kNgx,
  kUtility,
  kVideo,
};

inline constexpr std::array<Capability, 7> kAllCapabilities = {
    Capability::kCompute, Capability::kCompat32, Capability::kDisplay, Capability::kGraphics,
    Capability::kNgx,     Capability::kUtility,  Capability::kVideo};

[[nodiscard]] std::optional<Capability> capability_from_name(std::string_view name);
[[nodiscard]] std::string_view capability_name(Capability cap);

class CapabilitySet {
 public:
  void add(Capability cap) { bits_ |= bit(cap); }
  [[nodiscard]] bool has(Capability cap) const { return (bits_ & bit(cap)) != 0; }
  [[nodiscard]] bool empty() const { return bits_ == 0; }
  [[nodiscard]] bool overlaps(const CapabilitySet& other) const {
    return (bits_ & other.bits_) != 0;
  }
  bool operator==(const CapabilitySet&) const = default;

  // Every capability there is.
  [[nodiscard]] static CapabilitySet all();

  // "compute,utility" in kAllCapabilities order.
  [[nodiscard]] std::string to_string() const;
  // {"compute", "utility"}, in the same order.
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  static std::uint32_t bit(Capability cap) { return 1u << static_cast<unsigned>(cap); }
  std::uint32_t bits_ = 0;
};

}  // namespace gcr
