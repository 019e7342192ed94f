#!/bin/sh
# Fetches the container engines users install in 2026, for the tests that run them
# (test/integration/newer_engines_test.cpp): containerd and Docker from Debian 13 (trixie:
# containerd 1.7, docker.io 26) and from sid (containerd 2.x, docker.io 28). Their Go programs
# run on Debian 12 as they are; Debian 12's runc runs under them. Also the CRI API through which
# a kubelet drives containerd: Kubernetes' runtime.v1 api.proto as sid's golang-k8s-cri-api-dev
# ships it (with the CDI_devices field), which the build compiles into the tests' CRI client
# (test/CMakeLists.txt) when it finds it here.
#
# The .debs are fetched with `apt-get download` through a private sources list per suite, with
# private lists, cache, preferences and package status (the machine's apt configuration is
# neither used nor changed), and unpacked with `dpkg-deb -x` (never installed) into
# <cache>/<suite>/root and <cache>/cri-api/root. Everything is cached in $GCR_TEST_CACHE (default
# /var/cache/gpu-container-runtime-tests), outside the checkout; the output says whether the
# cache was used or what was downloaded. Without a cache and without the archive, this fails.
# Prints the directory holding trixie/, sid/ and cri-api/ last. Needs root (the programs run as
# root and must be root's).
set -eu
# shellcheck source=test/private-apt.sh
. "$(dirname "$0")/private-apt.sh"

CACHE=${GCR_TEST_CACHE:-/var/cache/gpu-container-runtime-tests}/engines
ARCHIVE=${GCR_DEBIAN_ARCHIVE:-http://deb.debian.org/debian}
# Bump when what is unpacked below changes: a cache built by another revision is rebuilt.
REVISION=1
SUITES="trixie sid"
PACKAGES="containerd docker.io docker-cli"
# The CRI API has its own cache entry (cri-api/ready), so that adding it kept the engines'.
CRI_REVISION=1
CRI_PACKAGE=golang-k8s-cri-api-dev
CRI_PROTO=usr/share/gocode/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto

say() { echo "newer-engines: $*" >&2; }
die() {
  say "$*"
  exit 1
}

# fetch DIR SUITE PACKAGE...: the packages' .debs from SUITE, unpacked into DIR/root.
fetch() {
  dir=$1 suite=$2
  shift 2
  rm -rf "$dir"
  mkdir -p "$dir/debs" "$dir/root"
  private_apt "$dir/apt" \
    "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $ARCHIVE $suite main" amd64
  # shellcheck disable=SC2086 # the options are split on purpose
  apt-get $APT -q update >"$dir/apt/update.log" 2>&1 ||
    die "cannot reach Debian's archive ($ARCHIVE $suite): $(tail -n 3 "$dir/apt/update.log" | tr '\n' ' ')"
  # shellcheck disable=SC2086
  (cd "$dir/debs" && apt-get $APT -q download "$@" >"$dir/apt/download.log" 2>&1) ||
    die "cannot download $* from $suite: $(tail -n 3 "$dir/apt/download.log" | tr '\n' ' ')"
  for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir/root"; done
  rm -rf "$dir/root/usr/share/doc" "$dir/root/usr/share/man" "$dir/apt/cache"
}

engines() {
  key="revision $REVISION; suites $SUITES; packages $PACKAGES"
  if [ -f "$CACHE/ready" ] && [ "$(sed -n 1p "$CACHE/ready")" = "$key" ]; then
    say "cache used: $(sed -n 2p "$CACHE/ready") in $CACHE (nothing downloaded)"
    return
  fi
  say "cache not used ($CACHE has no engines of this revision): downloading from $ARCHIVE"
  versions=""
  for suite in $SUITES; do
    S=$CACHE/$suite
    # shellcheck disable=SC2086 # one package a word
    fetch "$S" "$suite" $PACKAGES
    for program in containerd containerd-shim-runc-v2 ctr dockerd docker; do
      [ -x "$S/root/usr/bin/$program" ] || [ -x "$S/root/usr/sbin/$program" ] ||
        die "$suite's packages have no $program"
    done
    got="$suite: containerd $("$S/root/usr/bin/containerd" --version | cut -d' ' -f3)"
    got="$got, dockerd $("$S/root/usr/sbin/dockerd" --version | sed 's/^Docker version \([^,]*\),.*/\1/')"
    say "downloaded $got ($(du -sh "$S/debs" | cut -f1))"
    versions="${versions:+$versions; }$got"
  done
  printf '%s\n%s\n' "$key" "$versions" >"$CACHE/ready"
}

# cri-api/api.proto: sid's file with its `[debug_redact = true]` field options left out, the one
# change Debian 12's protoc (3.21) needs: that option came with protobuf 22, and it changes only
# how a program prints the field (the registry credentials), never the wire. The file as shipped
# stays in cri-api/root.
cri_api() {
  C=$CACHE/cri-api
  key="revision $CRI_REVISION; sid $CRI_PACKAGE"
  if [ -f "$C/ready" ] && [ "$(sed -n 1p "$C/ready")" = "$key" ]; then
    say "cache used: $(sed -n 2p "$C/ready") in $C (nothing downloaded)"
    return
  fi
  say "cache not used ($C has no CRI API of this revision): downloading from $ARCHIVE"
  fetch "$C" sid "$CRI_PACKAGE"
  grep -q 'CDI_devices' "$C/root/$CRI_PROTO" ||
    die "sid's $CRI_PACKAGE has no CDI_devices field ($C/root/$CRI_PROTO)"
  sed 's/ \[debug_redact = true\]//' "$C/root/$CRI_PROTO" >"$C/api.proto"
  protoc --proto_path="$C" --descriptor_set_out=/dev/null api.proto ||
    die "Debian 12's protoc cannot read sid's CRI API ($C/api.proto)"
  got="$CRI_PACKAGE $(dpkg-deb -f "$C"/debs/*.deb Version)"
  say "downloaded $got ($(du -sh "$C/debs" | cut -f1))"
  printf '%s\n%s\n' "$key" "$got" >"$C/ready"
}

[ "$(id -u)" = 0 ] || die "needs root: the engines run as root and their files must be root's"
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
engines
cri_api
echo "$CACHE"
