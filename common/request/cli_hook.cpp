#include "request/cli_hook.h"

#include <algorithm>

#include "base/text.h"
#include "compat/nvidia_cli.h"

namespace gcr {
namespace {

constexpr const char* kWhere = "containerd's --gpus hook (nvidia-container-cli)";

// Adds the comma-separated items of `value` that `to` does not hold yet.
void append(std::vector<std::string>& to, const std::string& value) {
  for (auto item : split(value, ',')) {
    const auto t = trim(item);
    if (!t.empty() && std::find(to.begin(), to.end(), t) == to.end()) to.emplace_back(t);
  }
}

Result<CliHookRequest> request_of(const std::vector<std::string>& args) {
  auto line = parse_nvidia_cli(args);
  if (!line) return line.error().wrap(kWhere);
  if (line->command != "configure")
    return Error{std::string(kWhere) + ": " + quote(line->command, 64) + " is not configure"};
  // The one operand is the rootfs ({{rootfs}}), which the container's spec names anyway.
  if (line->operands.size() > 1)
    return Error{std::string(kWhere) + ": unexpected " + quote(line->operands[1], 64)};
  CliHookRequest r;
  for (const auto& f : line->flags) {
    if (const auto cap = capability_from_name(f.name)) {
      r.capabilities.add(*cap);
    } else if (f.name == "device") {
      append(r.devices, f.value);
    } else if (f.name == "require") {
      r.requirements.push_back(f.value);
    } else if (f.name == "mig-config") {
      append(r.mig_config, f.value);
    } else if (f.name == "mig-monitor") {
      append(r.mig_monitor, f.value);
    } else if (f.name == "imex-channel") {
      append(r.imex_channels, f.value);
    }
  }
  return r;
}

}  // namespace

Result<std::optional<CliHookRequest>> read_cli_hook(const SpecView& spec) {
  for (const auto& hook : spec.runtime_hooks) {
    if (!is_ctr_gpus_hook(hook.args)) continue;
    auto request = request_of(nvidia_cli_args(hook.args));
    if (!request) return request.error();
    return std::optional<CliHookRequest>(std::move(*request));
  }
  return std::optional<CliHookRequest>();
}

}  // namespace gcr
