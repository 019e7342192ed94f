#!/bin/sh
# Fetches the container engines users install in 2026, for the tests that run them
# (test/integration/newer_engines_test.cpp): containerd and Docker from Debian 13 (trixie:
# containerd 1.7, docker.io 26) and from sid (containerd 2.x, docker.io 28). Their Go programs
# run on Debian 12 as they are; Debian 12's runc runs under them.
#
# The .debs are fetched with `apt-get download` through a private sources list per suite, with
# private lists, cache, preferences and package status (the machine's apt configuration is
# neither used nor changed), and unpacked with `dpkg-deb -x` (never installed) into
# <cache>/<suite>/root. Everything is cached in $GCR_TEST_CACHE (default
# /var/cache/gpu-container-runtime-tests), outside the checkout; the output says whether the
# cache was used or what was downloaded. Without a cache and without the archive, this fails.
# Prints the directory holding trixie/ and sid/ last. Needs root (the programs run as root and
# must be root's).
set -eu
# shellcheck source=test/private-apt.sh
. "$(dirname "$0")/private-apt.sh"

CACHE=${GCR_TEST_CACHE:-/var/cache/gpu-container-runtime-tests}/engines
ARCHIVE=${GCR_DEBIAN_ARCHIVE:-http://deb.debian.org/debian}
# Bump when what is unpacked below changes: a cache built by another revision is rebuilt.
REVISION=1
SUITES="trixie sid"
PACKAGES="containerd docker.io docker-cli"

say() { echo "newer-engines: $*" >&2; }
die() {
  say "$*"
  exit 1
}

[ "$(id -u)" = 0 ] || die "needs root: the engines run as root and their files must be root's"
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
KEY="revision $REVISION; suites $SUITES; packages $PACKAGES"

if [ -f "$CACHE/ready" ] && [ "$(sed -n 1p "$CACHE/ready")" = "$KEY" ]; then
  say "cache used: $(sed -n 2p "$CACHE/ready") in $CACHE (nothing downloaded)"
  echo "$CACHE"
  exit 0
fi

say "cache not used ($CACHE has no engines of this revision): downloading from $ARCHIVE"
versions=""
for suite in $SUITES; do
  S=$CACHE/$suite
  rm -rf "$S"
  mkdir -p "$S/debs" "$S/root"
  private_apt "$S/apt" \
    "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $ARCHIVE $suite main" amd64
  # shellcheck disable=SC2086 # the options are split on purpose
  apt-get $APT -q update >"$S/apt/update.log" 2>&1 ||
    die "cannot reach Debian's archive ($ARCHIVE $suite): $(tail -n 3 "$S/apt/update.log" | tr '\n' ' ')"
  # shellcheck disable=SC2086
  (cd "$S/debs" && apt-get $APT -q download $PACKAGES >"$S/apt/download.log" 2>&1) ||
    die "cannot download $PACKAGES from $suite: $(tail -n 3 "$S/apt/download.log" | tr '\n' ' ')"
  for deb in "$S"/debs/*.deb; do dpkg-deb -x "$deb" "$S/root"; done
  rm -rf "$S/root/usr/share/doc" "$S/root/usr/share/man" "$S/apt/cache"
  for program in containerd containerd-shim-runc-v2 ctr dockerd docker; do
    [ -x "$S/root/usr/bin/$program" ] || [ -x "$S/root/usr/sbin/$program" ] ||
      die "$suite's packages have no $program"
  done
  got="$suite: containerd $("$S/root/usr/bin/containerd" --version | cut -d' ' -f3)"
  got="$got, dockerd $("$S/root/usr/sbin/dockerd" --version | sed 's/^Docker version \([^,]*\),.*/\1/')"
  say "downloaded $got ($(du -sh "$S/debs" | cut -f1))"
  versions="${versions:+$versions; }$got"
done
printf '%s\n%s\n' "$KEY" "$versions" >"$CACHE/ready"
echo "$CACHE"
