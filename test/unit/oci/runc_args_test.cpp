#include <doctest/doctest.h>

#include "oci/runc_args.h"

using gcr::parse_runc_args;
using gcr::RuncArgs;
using Args = std::vector<std::string>;

TEST_CASE("containerd's go-runc create: globals, bundle, pid file, console socket") {
  const RuncArgs a = parse_runc_args(
      {"--root", "/run/containerd/runc/k8s.io", "--log", "/run/c/log.json", "--log-format", "json",
       "--systemd-cgroup", "create", "--bundle", "/run/c/b1", "--pid-file", "/run/c/init.pid",
       "--console-socket", "/tmp/pty1/pty.sock", "ctr1"});
  CHECK(a.command == "create");
  CHECK(a.edits_bundle());
  CHECK(a.bundle == "/run/c/b1");
  CHECK(a.container_id == "ctr1");
  CHECK(a.log_path == "/run/c/log.json");
  CHECK(a.log_format == "json");
  CHECK_FALSE(a.debug);
}

TEST_CASE("go-runc pass-through commands are not edits") {
  for (const Args& args :
       {Args{"--root", "/r", "start", "ctr1"}, Args{"--root", "/r", "state", "ctr1"},
        Args{"--root", "/r", "--log", "/l", "--log-format", "json", "delete", "--force", "ctr1"},
        Args{"--root", "/r", "kill", "ctr1", "9"}, Args{"features"},
        Args{"ps", "--format", "json", "x"}, Args{"events", "--stats", "x"}, Args{"pause", "x"},
        Args{"resume", "x"}, Args{"update", "--resources", "-", "x"}, Args{"checkpoint", "x"},
        Args{"restore", "x"}, Args{"spec"}, Args{"list"}, Args{"some-future-command", "create"}}) {
    CAPTURE(args);
    CHECK_FALSE(parse_runc_args(args).edits_bundle());
  }
}

TEST_CASE("a container id that is `create` is not a command") {
  CHECK(parse_runc_args({"state", "create"}).command == "state");
  CHECK_FALSE(parse_runc_args({"delete", "create"}).edits_bundle());
  const RuncArgs a = parse_runc_args({"create", "--bundle", "create", "create"});
  CHECK(a.bundle == "create");
  CHECK(a.container_id == "create");
}

TEST_CASE("bundle spellings: --bundle X, --bundle=X, -b X, -b=X, -bundle X; last wins") {
  CHECK(parse_runc_args({"create", "--bundle", "/a", "c"}).bundle == "/a");
  CHECK(parse_runc_args({"create", "--bundle=/b", "c"}).bundle == "/b");
  CHECK(parse_runc_args({"create", "-b", "/c", "c"}).bundle == "/c");
  CHECK(parse_runc_args({"create", "-b=/d", "c"}).bundle == "/d");
  CHECK(parse_runc_args({"create", "-bundle", "/e", "c"}).bundle == "/e");
  CHECK(parse_runc_args({"create", "-b", "/f", "--bundle", "/g", "c"}).bundle == "/g");
}

TEST_CASE("no bundle flag means the working directory") {
  const RuncArgs a = parse_runc_args({"create", "c1"});
  CHECK(a.bundle.empty());
  CHECK(a.container_id == "c1");
}

TEST_CASE("conmon and podman spellings: --flag=value globals") {
  const RuncArgs a = parse_runc_args({"--root=/run/runc", "--systemd-cgroup", "--log-format=json",
                                      "--log=/var/ctr.log", "create", "--bundle", "/var/u",
                                      "--pid-file", "/var/pid", "--no-new-keyring", "ctr"});
  CHECK(a.command == "create");
  CHECK(a.log_path == "/var/ctr.log");
  CHECK(a.log_format == "json");
  CHECK(a.bundle == "/var/u");
  CHECK(a.container_id == "ctr");
}

TEST_CASE("dockerd wrapper: runtimeArgs before runc's globals") {
  const RuncArgs a =
      parse_runc_args({"--debug", "--gpu-config", "/etc/x.toml", "--root", "/r", "--log", "/l",
                       "--log-format", "json", "create", "--bundle", "/b", "c"});
  CHECK(a.debug);
  CHECK(a.config_path == "/etc/x.toml");
  CHECK(a.bundle == "/b");
}

TEST_CASE("run is edited too, with its own switches") {
  const RuncArgs a = parse_runc_args({"run", "-d", "--keep", "--bundle", "/b", "c"});
  CHECK(a.command == "run");
  CHECK(a.edits_bundle());
  CHECK(a.bundle == "/b");
  CHECK(a.container_id == "c");
}

TEST_CASE("create flags after the container id still count (runc reorders them)") {
  const RuncArgs a = parse_runc_args({"create", "c", "--bundle", "/late"});
  CHECK(a.container_id == "c");
  CHECK(a.bundle == "/late");
}

TEST_CASE("exec: flags stop at the container id so the process argv is not read") {
  const RuncArgs a = parse_runc_args({"exec", "-e", "A=1", "--preserve-fds", "2", "--process",
                                      "/p.json", "ctr", "sh", "--preserve-fds", "9"});
  CHECK(a.container_id == "ctr");
  CHECK(a.preserve_fds == 2);
}

TEST_CASE("version, help and debug") {
  CHECK(parse_runc_args({"--version"}).version);
  CHECK(parse_runc_args({"-v"}).version);
  CHECK(parse_runc_args({"--help"}).help);
  CHECK(parse_runc_args({"-h"}).help);
  CHECK(parse_runc_args({"--debug=true", "state", "x"}).debug);
  CHECK_FALSE(parse_runc_args({"--debug=false", "state", "x"}).debug);
  const RuncArgs create_help = parse_runc_args({"create", "--help"});
  CHECK(create_help.help);
  CHECK_FALSE(create_help.edits_bundle());
  // runc prints its version and runs no command: the bundle is not to be edited either.
  CHECK_FALSE(parse_runc_args({"-v", "create", "--bundle", "b", "c"}).edits_bundle());
  CHECK_FALSE(parse_runc_args({"--version", "run", "c"}).edits_bundle());
}

TEST_CASE("a value flag at the very end is tolerated") {
  const RuncArgs a = parse_runc_args({"create", "--bundle"});
  CHECK(a.command == "create");
  CHECK(a.bundle.empty());
  CHECK(parse_runc_args({"--root"}).command.empty());
}

TEST_CASE("preserve-fds") {
  CHECK(parse_runc_args({"create", "--preserve-fds", "3", "c"}).preserve_fds == 3);
  CHECK(parse_runc_args({"create", "--preserve-fds=4", "c"}).preserve_fds == 4);
  CHECK(parse_runc_args({"create", "--preserve-fds=-1", "c"}).preserve_fds == 0);
  // runc's flag library reads Go's integer forms.
  CHECK(parse_runc_args({"run", "--preserve-fds=0x2", "c"}).preserve_fds == 2);
  CHECK(parse_runc_args({"run", "--preserve-fds", "010", "c"}).preserve_fds == 8);
  CHECK(parse_runc_args({"run", "--preserve-fds", "+2", "c"}).preserve_fds == 0);
}

TEST_CASE("args_for_runc drops only the shim's own flag") {
  CHECK(gcr::args_for_runc({"--gpu-config", "/x.toml", "--root", "/r", "state", "c"}) ==
        Args{"--root", "/r", "state", "c"});
  CHECK(gcr::args_for_runc({"--root", "/r", "--gpu-config=/x.toml", "create", "--bundle", "/b",
                            "c"}) == Args{"--root", "/r", "create", "--bundle", "/b", "c"});
  const Args untouched{"--root", "/r", "--log", "/l", "exec", "c", "--gpu-config", "/x"};
  CHECK(gcr::args_for_runc(untouched) == untouched);
}
