// nvidia-container-runtime-hook: the name dockerd looks for to enable `docker run --gpus`.
// With gpu-container-runtime as docker's runtime the shim injects the GPUs and removes this
// prestart hook, so it never runs. If it does run, the container reached plain runc: a GPU
// request then fails with what to change (never a half-configured container).
#include <cstdio>

#include "base/version.h"
#include "compat/nvidia_flags.h"
#include "config/config_file.h"
#include "ctk/ctk.h"
#include "oci/container_state.h"
#include "oci/spec_io.h"
#include "oci/spec_view.h"
#include "request/request.h"

namespace gcr {
namespace {

Result<bool> container_asks_for_gpus() {
  auto state = read_container_state_from_stdin();
  if (!state) return state.error();
  auto config = load_config(config_path_from_env());
  if (!config) return config.error();
  auto bundle = read_bundle_spec(state->bundle);
  if (!bundle) return bundle.error();
  auto view = view_spec(bundle->spec);
  if (!view) return view.error();
  auto request = read_gpu_request(*view, *config, Logger("nvidia-container-runtime-hook"));
  if (!request) return request.error();
  return request->has_value();
}

}  // namespace

int legacy_nvidia_hook(const std::vector<std::string>& argv) {
  auto flags = read_legacy_hook_flags(argv);
  if (!flags) {
    std::fprintf(stderr, "nvidia-container-runtime-hook: %s\n", flags.error().message.c_str());
    return 2;
  }
  if (flags->version) {
    std::printf("nvidia-container-runtime-hook (gpu-ctk) version %s\n", kVersion);
    return 0;
  }
  const std::vector<std::string>& args = flags->rest;
  const std::string stage = args.empty() ? "" : args.front();
  if (stage == "poststart" || stage == "poststop") return 0;
  if (stage != "prestart") {
    std::fprintf(
        stderr,
        "usage: nvidia-container-runtime-hook [-debug] [-config FILE] [-version] prestart (the "
        "OCI state on stdin)\n");
    return 2;
  }
  auto asks = container_asks_for_gpus();
  if (!asks) {
    std::fprintf(stderr, "nvidia-container-runtime-hook: %s\n", asks.error().message.c_str());
    return 1;
  }
  if (!*asks) return 0;
  std::fprintf(
      stderr,
      "nvidia-container-runtime-hook: this container asks for GPUs but was started by plain runc: "
      "make "
      "gpu-container-runtime the engine's runtime (gpu-ctk runtime configure --runtime=docker "
      "--set-as-default) or run it with --runtime=<name of gpu-container-runtime>\n");
  return 1;
}

}  // namespace gcr
