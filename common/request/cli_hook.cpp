#include "request/cli_hook.h"

#include <set>

#include "base/text.h"
#include "compat/nvidia_cli.h"

namespace gcr {
namespace {

constexpr const char* kWhere = "containerd's --gpus hook (nvidia-container-cli)";

// Items in the order first given, each once; the spec's hook may hold any number of them.
class ItemList {
 public:
  // Adds the comma-separated items of `value` not held yet.
  void append(const std::string& value) {
    for (auto item : split(value, ',')) {
      std::string t(trim(item));
      if (!t.empty() && seen_.insert(t).second) items_.push_back(std::move(t));
    }
  }
  [[nodiscard]] std::vector<std::string> take() { return std::move(items_); }

 private:
  std::vector<std::string> items_;
  std::set<std::string> seen_;
};

Result<CliHookRequest> request_of(const std::vector<std::string>& args) {
  auto line = parse_nvidia_cli(args);
  if (!line) return line.error().wrap(kWhere);
  if (line->command != "configure")
    return Error{std::string(kWhere) + ": " + quote(line->command, 64) + " is not configure"};
  // The one operand is the rootfs ({{rootfs}}), which the container's spec names anyway.
  if (line->operands.size() > 1)
    return Error{std::string(kWhere) + ": unexpected " + quote(line->operands[1], 64)};
  CliHookRequest r;
  ItemList devices, mig_config, mig_monitor, imex_channels;
  for (const auto& f : line->flags) {
    if (const auto cap = capability_from_name(f.name)) {
      r.capabilities.add(*cap);
    } else if (f.name == "device") {
      devices.append(f.value);
    } else if (f.name == "require") {
      r.requirements.push_back(f.value);
    } else if (f.name == "mig-config") {
      mig_config.append(f.value);
    } else if (f.name == "mig-monitor") {
      mig_monitor.append(f.value);
    } else if (f.name == "imex-channel") {
      imex_channels.append(f.value);
    }
  }
  r.devices = devices.take();
  r.mig_config = mig_config.take();
  r.mig_monitor = mig_monitor.take();
  r.imex_channels = imex_channels.take();
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
