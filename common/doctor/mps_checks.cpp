#include "doctor/mps_checks.h"

#include <cmath>
#include <map>
#include <optional>

#include "base/node_stat.h"
#include "driver/host.h"
#include "mps/mps_daemon.h"

namespace gcr {
namespace {

constexpr const char* kArea = "mps";

std::string limits_text(const MpsState& state) {
  std::string text;
  for (std::size_t i = 0; i < state.pinned.size(); ++i) {
    text += (i == 0 ? "" : ", ") + std::string("GPU ") + std::to_string(i) + " " +
            (state.pinned[i].empty() ? "unlimited" : state.pinned[i]);
  }
  return text;
}

// The daemons of the resource's GPUs of `replicas` shares, `gpus` of them: one per container
// size, each holding its clients to its size's thread percentage. The ok line gives one share's
// limits and every daemon's servers and clients.
void check_group(const Config& config, const std::string& program, std::int64_t replicas,
                 std::size_t gpus, Findings& findings) {
  std::optional<MpsState> one_share;
  std::string one_share_pipe;
  unsigned servers = 0;
  unsigned clients = 0;
  for (std::int64_t shares = 1; shares <= replicas; ++shares) {
    const std::string pipe = mps_dir(config.device_plugin.mps_root,
                                     config.device_plugin.resource_name, replicas, shares) +
                             "/pipe";
    auto state = read_mps_state(program, pipe, gpus);
    if (!state) {
      findings.fail(kArea, state.error().message + ": the shared GPUs are Unhealthy", pipe,
                    "systemctl restart gpu-device-plugin (it runs the daemons)");
      return;
    }
    const unsigned pct = share_percentage(replicas, shares);
    if (!state->thread_percentage || std::lround(*state->thread_percentage) != pct) {
      findings.fail(kArea,
                    "the MPS control daemon's thread percentage is not " + std::to_string(shares) +
                        " of " + std::to_string(replicas) + " shares' " + std::to_string(pct) +
                        "%: another daemon answers on the pipe",
                    pipe, "systemctl restart gpu-device-plugin");
      return;
    }
    servers += state->servers;
    clients += state->clients;
    if (shares == 1) {
      one_share = std::move(*state);
      one_share_pipe = pipe;
    }
  }
  findings.ok(kArea,
              "the MPS control daemons answer (containers of 1 to " + std::to_string(replicas) +
                  " shares): each of " + std::to_string(replicas) + " shares " +
                  std::to_string(share_percentage(replicas, 1)) +
                  "% of the threads, pinned memory " + limits_text(*one_share) + "; " +
                  std::to_string(servers) + " servers, " + std::to_string(clients) + " clients",
              one_share_pipe);
}

}  // namespace

void check_mps(const Config& config, Findings& findings) {
  if (!config.mps()) return;
  DriverHost host(config.driver, lstat_node);
  const auto program = mps_control_program(host);
  if (!program) {
    findings.fail(kArea, "sharing = \"mps\", but the driver has no nvidia-cuda-mps-control",
                  host.files().driver_path("/"), "install NVIDIA's MPS (Debian: nvidia-cuda-mps)");
    return;
  }
  // The GPUs of each share count, served by a daemon per container size.
  std::map<std::int64_t, std::size_t> groups;
  if (const auto gpus = host.devices().gpus()) {
    for (const auto& gpu : *gpus) ++groups[config.replicas_for(gpu.index, gpu.model)];
  }
  for (const auto& [replicas, count] : groups)
    check_group(config, *program, replicas, count, findings);
}

}  // namespace gcr
