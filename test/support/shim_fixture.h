// A bundle, a configuration naming the recording fake runc, and helpers to run the shim.
#pragma once

#include <string>
#include <vector>

#include "json/strict_json.h"
#include "test_support.h"

namespace gcr::test {

class ShimFixture {
 public:
  ShimFixture();

  [[nodiscard]] std::string bundle() const { return dir_ / "bundle"; }
  [[nodiscard]] std::string spec_path() const { return dir_ / "bundle/config.json"; }
  [[nodiscard]] std::string config_path() const { return dir_ / "config.json"; }
  [[nodiscard]] std::string path(const std::string& rel) const { return dir_ / rel; }

  // Writes the shim's configuration ({"runtime": {"runtimes": [fake-runc]}} merged with `extra`).
  void write_config(const Json& extra = Json::object()) const;
  void write_spec(const std::string& text) const;

  // Runs gpu-container-runtime (or the program set_program named) with `args`; the fake runc
  // records into record.json.
  [[nodiscard]] ProcessResult shim(const std::vector<std::string>& args,
                                   RunOptions options = {}) const;
  // The shim under another name from now on: a link to it at `path`.
  void set_program(const std::string& path);

  // What the fake runc recorded; null when it was not run.
  [[nodiscard]] Json record() const;

 private:
  TempDir dir_;
  std::string program_;  // "": the built gpu-container-runtime
};

// The host's runc; throws (failing the calling test) with a hint when it is not installed.
[[nodiscard]] std::string runc_path();

// A minimal OCI spec whose process runs `args` in a busybox rootfs.
[[nodiscard]] Json busybox_spec(const std::vector<std::string>& args);

// Creates <bundle>/rootfs with a static busybox and its applet links.
void make_busybox_rootfs(const std::string& bundle);
// A tarball of a busybox rootfs (built under `dir`) for `docker import` / `podman import`;
// returns its path.
[[nodiscard]] std::string make_busybox_image_tar(const std::string& dir);

// A Debian-style rootfs on top of busybox: glibc's loader and libc from the host in
// /lib/x86_64-linux-gnu, /etc/ld.so.conf(.d), /etc/debian_version, and /probe (dlopen-probe).
void make_glibc_rootfs(const std::string& bundle);

// Shell commands for a busybox container: the names of its NVIDIA device nodes, and of its GPUs'
// nodes alone, on one line.
inline const std::string kListGpus = "ls /dev | grep nvidia | tr '\\n' ' '";
inline const std::string kGpuNodes = "ls /dev | grep -E '^nvidia[0-9]+$' | tr '\\n' ' '";

// The loader configuration file the shim writes in a GPU container.
inline const std::string kDropIn = "/etc/ld.so.conf.d/00-gpu-container-runtime.conf";

}  // namespace gcr::test
