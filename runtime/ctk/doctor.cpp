// gpu-ctk doctor: one line per check (ok, warn, FAIL) with the evidence and the fix; exit 1 when
// anything failed. The checks live in common/doctor.
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "base/text.h"
#include "config/config_file.h"
#include "ctk/ctk.h"
#include "doctor/doctor.h"

namespace po = boost::program_options;

namespace gcr {
namespace {

// The directory this gpu-ctk lives in (/usr/bin in the packages).
std::string our_directory() {
  char self[PATH_MAX];
  if (::realpath("/proc/self/exe", self) == nullptr) return "/usr/bin";
  return dirname_of(self);
}

// The probe installed with this gpu-ctk: beside it in a build tree, else in
// <prefix>/lib/gpu-container-runtime as the packages install it.
std::string probe_beside_us(const std::string& dir) {
  const std::string beside = dir + "/gpu-cuda-probe";
  if (::access(beside.c_str(), X_OK) == 0) return beside;
  return dirname_of(dir) + "/lib/gpu-container-runtime/gpu-cuda-probe";
}

bool known_engine(const std::string& engine) {
  return engine == "docker" || engine == "containerd" || engine == "crio" || engine == "podman";
}

}  // namespace

int ctk_doctor(const std::vector<std::string>& args) {
  DoctorOptions options;
  options.config_path = config_path_from_env();
  const std::string dir = our_directory();
  options.shim_path = dir + "/gpu-container-runtime";
  options.probe_path = probe_beside_us(dir);
  bool json = false;
  po::options_description desc("usage: gpu-ctk doctor [options] [--run [GPU...]]\n\noptions");
  desc.add_options()("help,h", "this text")("json", po::bool_switch(&json),
                                            "print the checks as JSON")(
      "engine", po::value(&options.engines)->composing(),
      "docker, containerd, crio or podman (repeatable; default: those installed)")(
      "run", po::bool_switch(&options.run),
      "also run CUDA in a throw-away container per GPU through the shim (GPUs named after the "
      "options: those only)")("docker-config", po::value(&options.docker_config),
                              "default: /etc/docker/daemon.json")(
      "containerd-config", po::value(&options.containerd_config),
      "default: /etc/containerd/config.toml")(
      "crio-config", po::value(&options.crio_config),
      "default: /etc/crio/crio.conf (and crio.conf.d beside it)")(
      "kubelet-config", po::value(&options.kubelet_config),
      "default: /var/lib/kubelet/config.yaml")("nvidia-config", po::value(&options.nvidia_config),
                                               "NVIDIA's configuration, if one is left (default: "
                                               "/etc/nvidia-container-runtime/config.toml)")(
      "runtime-path", po::value(&options.shim_path),
      "the gpu-container-runtime to run with (default: beside gpu-ctk)")(
      "probe", po::value(&options.probe_path),
      "the gpu-cuda-probe --run starts (default: installed with gpu-ctk)");
  po::options_description hidden;
  hidden.add_options()("gpu", po::value(&options.gpus)->composing());
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description positional;
  positional.add("gpu", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::fprintf(stderr, "gpu-ctk doctor: %s\n", e.what());
    return 2;
  }
  if (vm.count("help") != 0) {
    std::cout
        << desc
        << "\nExit status: 0 when nothing failed (warnings allowed), 1 when a check failed.\n";
    return 0;
  }
  if (!options.gpus.empty() && !options.run) {
    std::fprintf(stderr, "gpu-ctk doctor: GPUs are named only with --run\n");
    return 2;
  }
  for (const auto& engine : options.engines) {
    if (!known_engine(engine)) {
      std::fprintf(stderr,
                   "gpu-ctk doctor: --engine `%s`: not docker, containerd, crio or podman\n",
                   printable(engine, 64).c_str());
      return 2;
    }
  }
  const Findings findings = run_doctor(options);
  if (json) {
    std::printf("%s\n", json_text(findings_json(findings), 2).c_str());
  } else {
    for (const auto& check : findings.all()) std::printf("%s\n", check_line(check).c_str());
  }
  return findings.failed() ? 1 : 0;
}

}  // namespace gcr
