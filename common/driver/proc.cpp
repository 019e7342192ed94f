#include "driver/proc.h"

#include <cstdio>

#include "base/text.h"

namespace gcr {
namespace {

bool is_version(std::string_view s) {
  const auto parts = split(s, '.');
  if (parts.size() < 2 || parts.size() > 3) return false;
  for (auto p : parts) {
    if (!parse_decimal(p)) return false;
  }
  return true;
}

// "Key: value" lines -> map (first ':' splits, value trimmed).
std::map<std::string, std::string> key_values(std::string_view text) {
  std::map<std::string, std::string> out;
  for (auto line : split(text, '\n')) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    out[std::string(trim(line.substr(0, colon)))] = std::string(trim(line.substr(colon + 1)));
  }
  return out;
}

}  // namespace

std::string PciAddress::to_string() const {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

std::optional<PciAddress> parse_pci_address(std::string_view text) {
  const auto dot = text.rfind('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto fields = split(text.substr(0, dot), ':');
  if (fields.size() < 2 || fields.size() > 3) return std::nullopt;
  PciAddress a;
  const auto function = parse_hex(text.substr(dot + 1), 1);
  const auto device = parse_hex(fields.back(), 2);
  const auto bus = parse_hex(fields[fields.size() - 2], 2);
  const auto domain =
      fields.size() == 3 ? parse_hex(fields[0], 8) : std::optional<std::uint32_t>(0);
  if (!function || !device || !bus || !domain || *function > 7 || *device > 0x1f)
    return std::nullopt;
  a.domain = *domain;
  a.bus = *bus;
  a.device = *device;
  a.function = *function;
  return a;
}

Result<std::string> parse_driver_version(std::string_view text) {
  const auto first_line = split(text, '\n').front();
  const auto at = first_line.find("Kernel Module");
  if (at == std::string_view::npos) return Error{"no \"Kernel Module\" on the first line"};
  for (auto word : split(first_line.substr(at), ' ')) {
    if (is_version(word)) return std::string(word);
  }
  return Error{"no version number after \"Kernel Module\""};
}

Result<GpuInformation> parse_gpu_information(std::string_view text) {
  const auto kv = key_values(text);
  const auto get = [&](const char* key) -> std::optional<std::string> {
    auto it = kv.find(key);
    if (it == kv.end() || it->second.empty()) return std::nullopt;
    return it->second;
  };
  GpuInformation gpu;
  const auto uuid = get("GPU UUID");
  const auto bus = get("Bus Location");
  const auto minor = get("Device Minor");
  if (!uuid || !bus || !minor) return Error{"missing GPU UUID, Bus Location or Device Minor"};
  const auto address = parse_pci_address(*bus);
  const auto minor_number = parse_decimal(*minor);
  if (!address) return Error{"bad Bus Location `" + printable(*bus) + "`"};
  if (!minor_number || *minor_number > 254)
    return Error{"bad Device Minor `" + printable(*minor) + "`"};
  gpu.model = get("Model").value_or("");
  gpu.uuid = *uuid;
  gpu.bus = *address;
  gpu.minor = static_cast<unsigned>(*minor_number);
  return gpu;
}

std::map<std::string, unsigned> parse_char_majors(std::string_view text) {
  std::map<std::string, unsigned> majors;
  bool in_char = false;
  for (auto raw : split(text, '\n')) {
    const auto line = trim(raw);
    if (line == "Character devices:") {
      in_char = true;
      continue;
    }
    if (!in_char) continue;
    if (line.empty()) break;
    const auto space = line.find(' ');
    if (space == std::string_view::npos) continue;
    const auto major = parse_decimal(line.substr(0, space));
    if (major && *major < 4096)
      majors[std::string(trim(line.substr(space + 1)))] = static_cast<unsigned>(*major);
  }
  return majors;
}

Result<MigMinors> parse_mig_minors(std::string_view text) {
  MigMinors out;
  for (auto raw : split(text, '\n')) {
    const auto line = trim(raw);
    if (line.empty()) continue;
    const auto space = line.find(' ');
    const auto minor = space == std::string_view::npos
                           ? std::nullopt
                           : parse_decimal(trim(line.substr(space + 1)));
    if (!minor || *minor > 0xfffff) return Error{"malformed line `" + printable(line) + "`"};
    const auto name = line.substr(0, space);
    const auto value = static_cast<unsigned>(*minor);
    if (name == "config") {
      out.config = value;
    } else if (name == "monitor") {
      out.monitor = value;
    } else if (name.substr(0, 3) == "gpu" && name.size() > 7 &&
               name.substr(name.size() - 7) == "/access") {
      out.by_path[std::string(name)] = value;
    } else {
      return Error{"malformed line `" + printable(line) + "`"};
    }
  }
  return out;
}

Result<unsigned> parse_cap_file_minor(std::string_view text) {
  const auto kv = key_values(text);
  const auto it = kv.find("DeviceFileMinor");
  const auto minor = it == kv.end() ? std::nullopt : parse_decimal(it->second);
  if (!minor || *minor > 0xfffff) return Error{"no valid DeviceFileMinor"};
  return static_cast<unsigned>(*minor);
}

}  // namespace gcr
