#!/bin/sh
# The whole test suite from a clean build, as root (real containers and engines run):
#   1. install dependencies, fetch NVIDIA's real userspace driver from Debian's non-free archive
#      (test/real-driver.sh) and the containerd and Docker of Debian 13 and sid
#      (test/newer-engines.sh: both cached outside the checkout, say whether the cache was used;
#      fail when neither cache nor archive is there), build, run the unit and integration tests;
#   2. a real single-node Kubernetes cluster from Debian's kubernetes source, containerd and our
#      plugin (scripts/test-kubernetes.sh: the build is cached outside the checkout, and says
#      whether the cache was used);
#   3. the same tests built with AddressSanitizer and UBSan (clang), but for those that start
#      containers through an engine (dockerd, containerd's ctr): inside the engine's shim the
#      sanitizer runtime of our hooks sometimes cannot map its memory (ENOMEM); the first stage
#      runs them. The tree is scripts/configure-sanitized.sh's, which also builds the fuzz
#      targets: their libraries are these;
#   4. every libFuzzer target for FUZZ_SECONDS (default 20) from its seed corpus, one per CPU
#      at a time, from the sanitized tree (nothing more is compiled);
#   5. README's package block as a user types it, in a fresh clone (scripts/package.sh: the
#      product compiled once, the .deb with Debian's flags, the .rpm from that build's tree;
#      apt installs the .deb), fail on a compiler warning in their logs, and exercise the
#      packages (scripts/test-packages.sh: the .rpm in a throw-away root; the .deb upgraded,
#      removed and purged on this machine);
#   6. every other `sh` block of README.md as a user types it, in a fresh clone, with nothing of
#      ours in the environment (scripts/test-readme.sh; blocks README marks are listed as
#      skipped, the package block among them).
# Each stage says when it started, how long it took and how many of its compilations the
# compiler cache gave; the last line gives the total.
#
# Every build compiles through ccache (CMakeLists.txt) into one cache outside the checkout,
# $GCR_TEST_CACHE/ccache, kept for later runs. The paths of a build's own tree are hashed
# relative to its build directory (the base directory: the checkout here, /tmp for the packages'
# and README's trees), so a build elsewhere takes what an earlier build of the same flags
# compiled; a compiler, flag or header that changed misses. The cache hashes the locale (LANG,
# LC_ALL, LC_CTYPE, LC_MESSAGES: they translate the compiler's messages), so the suite's builds
# run in the one README's blocks get (env -i LANG=C.UTF-8), whose builds then take its objects.
set -eu
cd "$(dirname "$0")/.."
export LANG=C.UTF-8
unset LC_ALL LC_CTYPE LC_MESSAGES
STARTED=$(date +%s)
export CCACHE_DIR="${GCR_TEST_CACHE:-/var/cache/gpu-container-runtime-tests}/ccache"
CCACHE_BASEDIR=$(pwd)
export CCACHE_BASEDIR CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=6G
# The compilations since the last report: how many the cache answered; its size, and whether it
# had to evict (then later stages' builds miss what earlier ones stored: CCACHE_MAXSIZE is small).
compiler_cache() {
  command -v ccache >/dev/null || return 0
  ccache --print-stats | awk -v dir="$CCACHE_DIR" '
    $1 ~ /^(direct|preprocessed)_cache_hit$/ { hit += $2 }
    $1 == "cache_miss" { miss += $2 }
    $1 == "cache_size_kibibyte" { size = $2 }
    $1 == "cleanups_performed" { cleanups = $2 }
    END {
      if (hit + miss == 0) exit
      printf "test.sh: compiler cache: %d of %d compilations taken from it (%s, %.1f GiB)\n", hit, hit + miss, dir, size / 1048576
      if (cleanups > 0) printf "test.sh: compiler cache: full, %d cleanups evicted objects (CCACHE_MAXSIZE)\n", cleanups
    }'
  ccache --zero-stats >/dev/null
}
# Ends the stage running (its seconds, its compilations), starts the next; prints the time since
# the start.
STAGE="" STAGE_STARTED=$STARTED
stage() {
  compiler_cache
  now=$(date +%s)
  if [ -n "$STAGE" ]; then echo "test.sh: $((now - STAGE_STARTED)) s: $STAGE"; fi
  STAGE=$* STAGE_STARTED=$now
  echo "test.sh: [$((now - STARTED)) s] $*"
}
# Runs a build step quietly; on failure shows what it printed.
quiet() {
  log=$(mktemp)
  "$@" >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; echo "test.sh: failed: $*" >&2; exit 1; }
  rm -f "$log"
}
scripts/install-deps.sh
if [ -d "$CCACHE_DIR" ]; then
  echo "test.sh: compiler cache used: $(ccache --print-stats | awk '$1 == "files_in_cache" { print $2 }') files from earlier runs in $CCACHE_DIR"
else
  echo "test.sh: compiler cache empty: every compilation fills $CCACHE_DIR"
fi
compiler_cache >/dev/null
stage "NVIDIA's real driver files, and the engines of Debian 13 and sid"
GCR_REAL_DRIVER=$(test/real-driver.sh)
GCR_NEWER_ENGINES=$(test/newer-engines.sh)
export GCR_REAL_DRIVER GCR_NEWER_ENGINES
stage "build and test"
BUILD_DIR=${BUILD_DIR:-build} scripts/build.sh --clean
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure

stage "a real Kubernetes node (Debian's kubernetes 1.20, containerd, the plugin)"
scripts/test-kubernetes.sh "${BUILD_DIR:-build}"

stage "the suite under AddressSanitizer and UBSan (clang; the fuzz targets built too)"
# A clean tree, but for what the fuzz stage keeps there: the corpora earlier runs grew, and the
# inputs a failed run saved.
if [ -d build-asan ]; then
  find build-asan -mindepth 1 -maxdepth 1 ! -name corpus ! -name findings -exec rm -rf {} +
fi
quiet scripts/configure-sanitized.sh build-asan
quiet cmake --build build-asan
build-asan/test/unit-tests
build-asan/test/integration-tests \
  -tce="dockerd*,containerd: *,ctr run --gpus*,end to end*,the image built offline*,containerd 1.7 and 2.1*,Docker 26 and 28*"

stage "every parser fuzzed for a short while (libFuzzer, the sanitized tree's targets)"
GCR_FUZZ_DIR=build-asan scripts/fuzz.sh "${FUZZ_SECONDS:-20}"

stage "the packages, built by README's package block"
scripts/test-packages.sh

stage "README's commands as a user types them"
scripts/test-readme.sh
stage "all passed"
total=$(($(date +%s) - STARTED))
echo "test.sh: all passed in $total s ($((total / 60)) min $((total % 60)) s)"
