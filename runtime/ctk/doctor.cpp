// gpu-ctk doctor: one line per check (ok, warn, FAIL) with the evidence and the fix; exit 1 when
// anything failed. The checks live in common/doctor.
#include <limits.h>
#include <stdlib.h>

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

// The shim installed beside this gpu-ctk (/usr/bin in the packages).
std::string shim_beside_us() {
  char self[PATH_MAX];
  if (::realpath("/proc/self/exe", self) == nullptr) return "/usr/bin/gpu-container-runtime";
  return dirname_of(self) + "/gpu-container-runtime";
}

bool known_engine(const std::string& engine) {
  return engine == "docker" || engine == "containerd" || engine == "crio" || engine == "podman";
}

}  // namespace

int ctk_doctor(const std::vector<std::string>& args) {
  DoctorOptions options;
  options.config_path = config_path_from_env();
  options.shim_path = shim_beside_us();
  bool json = false;
  po::options_description desc("usage: gpu-ctk doctor [options]\n\noptions");
  desc.add_options()("help,h", "this text")("json", po::bool_switch(&json),
                                            "print the checks as JSON")(
      "engine", po::value(&options.engines)->composing(),
      "docker, containerd, crio or podman (repeatable; default: those installed)")(
      "run", po::bool_switch(&options.run),
      "also start a throw-away container with GPU 0 through the shim")(
      "docker-config", po::value(&options.docker_config), "default: /etc/docker/daemon.json")(
      "containerd-config", po::value(&options.containerd_config),
      "default: /etc/containerd/config.toml")(
      "crio-config", po::value(&options.crio_config),
      "default: /etc/crio/crio.conf (and crio.conf.d beside it)")(
      "kubelet-config", po::value(&options.kubelet_config),
      "default: /var/lib/kubelet/config.yaml")(
      "runtime-path", po::value(&options.shim_path),
      "the gpu-container-runtime to run with (default: beside gpu-ctk)");
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(desc).run(), vm);
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
