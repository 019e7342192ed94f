// gpu-ctk doctor's output: one line per check, the JSON form, and the driver version a CDI
// spec's library names carry.
#include <doctest/doctest.h>

#include "doctor/cdi_checks.h"
#include "doctor/check.h"

TEST_CASE("a check line: level padded, area, message, evidence once, fix") {
  gcr::Findings f;
  f.ok("driver", "kernel module 550.54.15 loaded", "/proc/driver/nvidia/version");
  f.warn("docker", "the default runtime is `runc`", "/etc/docker/daemon.json", "gpu-ctk x");
  f.fail("driver", "missing device node (/dev/nvidia0)", "/dev/nvidia0", "nvidia-modprobe -c 0");
  CHECK(gcr::check_line(f.all()[0]) ==
        "ok    driver: kernel module 550.54.15 loaded (/proc/driver/nvidia/version)");
  CHECK(gcr::check_line(f.all()[1]) ==
        "warn  docker: the default runtime is `runc` (/etc/docker/daemon.json); fix: gpu-ctk x");
  CHECK(gcr::check_line(f.all()[2]) ==
        "FAIL  driver: missing device node (/dev/nvidia0); fix: nvidia-modprobe -c 0");
  CHECK(f.failed());
}

TEST_CASE("findings as JSON: ok only without a FAIL; lower-case levels") {
  gcr::Findings f;
  f.ok("cdi", "no CDI specs");
  f.warn("podman", "no CDI device", "/etc/cdi", "gpu-ctk cdi generate");
  auto doc = gcr::findings_json(f);
  CHECK(doc.at("ok") == true);
  CHECK(doc.at("checks").at(1) == gcr::Json{{"level", "warn"},
                                            {"area", "podman"},
                                            {"message", "no CDI device"},
                                            {"evidence", "/etc/cdi"},
                                            {"fix", "gpu-ctk cdi generate"}});
  f.fail("run", "no GPU", "", "");
  CHECK(gcr::findings_json(f).at("ok") == false);
  CHECK(gcr::findings_json(f).at("checks").at(2).at("level") == "fail");
}

TEST_CASE("the driver version in a library's file name") {
  CHECK(gcr::library_version_of("/usr/lib/x86_64-linux-gnu/libcuda.so.550.54.15") == "550.54.15");
  CHECK(gcr::library_version_of("/lib/libnvidia-ml.so.535.104.05") == "535.104.05");
  CHECK(gcr::library_version_of("/usr/lib/libcuda.so.1") == std::nullopt);
  CHECK(gcr::library_version_of("/usr/lib/libfoo.so.1.2") == std::nullopt);
  CHECK(gcr::library_version_of("/usr/lib/libcuda.so") == std::nullopt);
  CHECK(gcr::library_version_of("/usr/bin/nvidia-smi") == std::nullopt);
  CHECK(gcr::library_version_of("/x/libnvidia-glcore.so.550.54.15.bak") == std::nullopt);
}
