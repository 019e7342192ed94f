#include "doctor/mps_checks.h"

#include <cmath>
#include <map>

#include "base/node_stat.h"
#include "driver/host.h"
#include "mps/mps_daemon.h"

namespace gcr {
namespace {

constexpr const char* kArea = "mps";

std::string limits_text(const MpsState& state) {
  std::string text;
  for (std::size_t i = 0; i < state.pinned_mib.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::string("GPU ") + std::to_string(i) + " " +
            (state.pinned_mib[i] ? std::to_string(*state.pinned_mib[i]) + " MiB" : "unlimited");
  }
  return text;
}

// The daemon of the resource's GPUs of `replicas` shares, `gpus` of them.
void check_group(const Config& config, const std::string& program, std::int64_t replicas,
                 std::size_t gpus, Findings& findings) {
  const std::string pipe =
      mps_dir(config.device_plugin.mps_root, config.device_plugin.resource_name, replicas) +
      "/pipe";
  auto state = read_mps_state(program, pipe, gpus);
  if (!state) {
    findings.fail(kArea, state.error().message + ": the shared GPUs are Unhealthy", pipe,
                  "systemctl restart gpu-device-plugin (it runs the daemon)");
    return;
  }
  const unsigned share = share_percentage(replicas);
  if (!state->thread_percentage || std::lround(*state->thread_percentage) != share) {
    findings.fail(kArea,
                  "the MPS control daemon's thread percentage is not one share's " +
                      std::to_string(share) + "%: another daemon answers on the pipe",
                  pipe, "systemctl restart gpu-device-plugin");
    return;
  }
  findings.ok(kArea,
              "the MPS control daemon answers: each of " + std::to_string(replicas) + " shares " +
                  std::to_string(share) + "% of the threads, pinned memory " + limits_text(*state) +
                  "; " + std::to_string(state->servers) + " servers, " +
                  std::to_string(state->clients) + " clients",
              pipe);
}

}  // namespace

void check_mps(const Config& config, Findings& findings) {
  if (!config.mps()) return;
  DriverHost host(config.driver, lstat_node);
  const auto program = mps_control_program(host);
  if (!program) {
    findings.fail(kArea, "sharing = \"mps\", but the driver has no nvidia-cuda-mps-control",
                  host.driver_path("/"), "install NVIDIA's MPS (Debian: nvidia-cuda-mps)");
    return;
  }
  // One daemon per share count, serving the GPUs of that count.
  std::map<std::int64_t, std::size_t> groups;
  if (const auto gpus = host.gpus()) {
    for (const auto& gpu : *gpus) ++groups[config.replicas_for(gpu.index, gpu.model)];
  }
  for (const auto& [replicas, count] : groups)
    check_group(config, *program, replicas, count, findings);
}

}  // namespace gcr
