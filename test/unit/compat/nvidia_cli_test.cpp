// nvidia-container-cli's command line as libnvidia-container's argp reads it.
#include <doctest/doctest.h>

#include "compat/nvidia_cli.h"

namespace {

using Args = std::vector<std::string>;

gcr::CliCommandLine parsed(const Args& args) {
  auto line = gcr::parse_nvidia_cli(args);
  REQUIRE_MESSAGE(line.ok(), line.error().message);
  return *line;
}

std::string cli_error(const Args& args) {
  auto line = gcr::parse_nvidia_cli(args);
  REQUIRE_FALSE(line.ok());
  return line.error().message;
}

}  // namespace

TEST_CASE("global flags, the command, its flags in each spelling, the operand") {
  const auto line = parsed({"--load-kmods", "-r", "/run/nvidia/driver", "--user", "configure",
                            "--device=0,1", "-d", "2", "--compute", "-u", "--require", "cuda>=12.0",
                            "-l@/sbin/ldconfig", "--pid=42", "/rootfs"});
  REQUIRE(line.global.size() == 3);
  CHECK(line.global[1].name == "root");
  CHECK(line.global[1].value == "/run/nvidia/driver");
  CHECK(line.global[2].name == "user");
  CHECK(line.global[2].value == "");
  CHECK(line.command == "configure");
  REQUIRE(line.flags.size() == 7);
  CHECK(line.flags[0].value == "0,1");
  CHECK(line.flags[1].name == "device");
  CHECK(line.flags[1].value == "2");
  CHECK(line.flags[3].name == "utility");
  CHECK(line.flags[4].value == "cuda>=12.0");
  CHECK(line.flags[5].name == "ldconfig");
  CHECK(line.flags[5].value == "@/sbin/ldconfig");
  CHECK(line.operands == Args{"/rootfs"});
}

TEST_CASE("info and list have their own flags") {
  CHECK(parsed({"info", "--csv"}).flags.at(0).name == "csv");
  const auto list = parsed({"list", "--device=1", "--libraries", "-b", "--compat32"});
  CHECK(list.flags.size() == 4);
  CHECK(cli_error({"info", "--device=1"}) == "unknown info flag `--device=1`");
}

TEST_CASE("unknown flags and commands are named") {
  CHECK(cli_error({"--bogus", "info"}) == "unknown global flag `--bogus`");
  CHECK(cli_error({"frobnicate"}) == "unknown command `frobnicate`");
  CHECK(cli_error({"--load-kmods"}) == "no command (configure, info or list)");
  CHECK(cli_error({"configure", "--compute=yes"}) == "`--compute` takes no value");
  CHECK(cli_error({"configure", "--device"}) == "`--device` needs a value");
}

TEST_CASE("containerd's --gpus hook is recognised by its shape, wherever the programs are") {
  const Args hook{"containerd", "oci-hook", "--", "/opt/bin/nvidia-container-cli", "configure"};
  CHECK(gcr::is_ctr_gpus_hook(hook));
  CHECK(gcr::nvidia_cli_args(hook) == Args{"configure"});
  CHECK(gcr::is_ctr_gpus_hook(
      {"/usr/local/bin/containerd", "oci-hook", "--", "nvidia-container-cli"}));
  CHECK_FALSE(gcr::is_ctr_gpus_hook({"containerd", "oci-hook", "--", "/usr/bin/true"}));
  CHECK_FALSE(gcr::is_ctr_gpus_hook({"containerd", "oci-hook", "/usr/bin/nvidia-container-cli"}));
  CHECK_FALSE(gcr::is_ctr_gpus_hook({"nvidia-container-runtime-hook", "prestart"}));
  CHECK(gcr::nvidia_cli_args({"nvidia-container-runtime-hook", "prestart"}).empty());
}
