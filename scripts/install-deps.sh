#!/bin/sh
# Installs everything the build, the tests and the demo need, from Debian 12's archive only.
set -eu
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps.sh: run as root (it calls apt-get)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
PACKAGES="g++ gcc-multilib cmake ninja-build pkg-config ca-certificates
  nlohmann-json3-dev libboost-program-options-dev libboost-dev libboost-filesystem-dev
  libfmt-dev doctest-dev libtomlplusplus-dev libyaml-cpp-dev clang libclang-rt-14-dev lld
  libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc zlib1g-dev
  runc busybox-static podman containerd docker.io
  debhelper dpkg-dev lintian rpm ccache
  make rsync openssl iproute2 procps containernetworking-plugins systemd musl"
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT
# shellcheck disable=SC2086 # the package list is split on purpose
if ! { apt-get update && apt-get install -y --no-install-recommends $PACKAGES; } >"$LOG" 2>&1; then
  cat "$LOG" >&2
  echo "install-deps.sh: apt-get failed" >&2
  exit 1
fi
echo "install-deps.sh: dependencies installed"
