#!/bin/sh
# The whole test suite from a clean build, as root (real containers and engines run):
#   1. install dependencies; fetch the containerd and Docker of Debian 13 and sid
#      (test/newer-engines.sh) and, while the first build compiles, NVIDIA's real userspace driver
#      from Debian's non-free archive (test/real-driver.sh) and what Kubernetes' build needs
#      (scripts/test-kubernetes.sh --download): all cached outside the checkout, each saying
#      whether its cache was used, failing when neither cache nor archive is there;
#   2. build (scripts/build.sh: the .deb's compiler flags, warnings are errors), run the unit and
#      integration tests;
#   3. the same tests built with AddressSanitizer and UBSan (clang), but for those that start
#      containers through an engine (dockerd, containerd's ctr): inside the engine's shim the
#      sanitizer runtime of our hooks sometimes cannot map its memory (ENOMEM); the first stage
#      runs them. The tree is scripts/configure-sanitized.sh's, which also builds the fuzz
#      targets: their libraries are these;
#   4. a real single-node Kubernetes cluster from Debian's kubernetes source, containerd and our
#      plugin (scripts/test-kubernetes.sh: the build is cached outside the checkout, and says
#      whether the cache was used);
#   5. every libFuzzer target for FUZZ_SECONDS (default 30) from its seed corpus, one per CPU
#      at a time, from the sanitized tree (nothing more is compiled), beside stage 4's checks at
#      the lowest CPU priority: this stage waits for them and prints what they said;
#   6. README's package block as a user types it, in a fresh clone (scripts/package.sh: the
#      product compiled once, the .deb with Debian's flags, the .rpm from that build's tree;
#      apt installs the .deb), fail on a compiler warning in their logs, and exercise the
#      packages (scripts/test-packages.sh: the .rpm in a throw-away root; the .deb upgraded,
#      removed and purged on this machine). The first build compiled the product with the same
#      flags, and -Werror and the locale are left out of the compiler cache's hash: the block
#      compiles nothing;
#   7. every other `sh` block of README.md as a user types it, in a fresh clone, with nothing of
#      ours in the environment (scripts/test-readme.sh; blocks README marks are listed as
#      skipped, the package block among them).
# The tests of stage 2 spend most of their time waiting on containers, engines and daemons, those
# of stage 3 less: once the first build is done, scripts/test-prebuild.sh builds, at the lowest
# CPU priority, the sanitized tree of stage 3 and then (beside stage 3's tests) the Kubernetes
# binaries of stage 4, and those stages start from what it built. Each stage says when it started, how long it took and
# how many of its compilations the compiler cache gave (what was compiled ahead is counted apart,
# with its own seconds); the last line gives the total.
#
# Every build compiles through ccache (CMakeLists.txt) into one cache outside the checkout,
# $GCR_TEST_CACHE/ccache, kept for later runs. The paths of a build's own tree are hashed
# relative to its build directory (the base directory: the checkout here, /tmp for the packages'
# and README's trees), so a build elsewhere takes what an earlier build of the same flags
# compiled; a compiler, flag or header that changed misses. The suite's builds run in the locale
# README's blocks get (env -i LANG=C.UTF-8: it translates the compiler's messages), which
# debhelper's builds have too (LC_ALL=C.UTF-8); the locale is left out of the cache's hash
# (below).
set -eu
cd "$(dirname "$0")/.."
export LANG=C.UTF-8
unset LC_ALL LC_CTYPE LC_MESSAGES
STARTED=$(date +%s)
export CCACHE_DIR="${GCR_TEST_CACHE:-/var/cache/gpu-container-runtime-tests}/ccache"
CCACHE_BASEDIR=$(pwd)
export CCACHE_BASEDIR CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=6G
# -Werror and the locale out of the hash: the package build (Debian's flags, as the development
# build's, scripts/configure.sh, but without -Werror, and debhelper builds with LC_ALL=C.UTF-8,
# where the suite's builds have LANG=C.UTF-8 alone: the same messages) takes the first build's
# objects. A warning the cache replays still fails every build here: scripts/build.sh, the
# sanitized stage, the packages' and README's stages read what their builds printed.
export CCACHE_IGNOREOPTIONS=-Werror CCACHE_SLOPPINESS=locale
# Each stage's compilations, and each step compiled ahead, are logged apart (ccache's stats_log:
# one answer per compilation), so that what runs at once is counted where it belongs.
LOGS=$(mktemp -d /tmp/gcr-test-XXXXXX)
PREBUILD=""
FETCHES="" FUZZ=""
cleanup() {
  if [ -n "$FUZZ" ]; then kill -- "-$FUZZ" 2>/dev/null || true; fi
  for fetch in $FETCHES; do
    kill -- "-${fetch#*:}" 2>/dev/null || true
  done
  if [ -n "$PREBUILD" ]; then
    kill -- "-$PREBUILD" 2>/dev/null || true
    wait "$PREBUILD" 2>/dev/null || true
  fi
  rm -rf "$LOGS"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
# The compilations a stats log holds: how many the cache answered; its size, and whether it had
# to evict (then later builds miss what earlier ones stored: CCACHE_MAXSIZE is small).
CLEANUPS=0
compiler_cache() {
  command -v ccache >/dev/null || return 0
  [ -s "$1" ] || return 0
  counts=$(awk '/^(direct|preprocessed)_cache_hit$/ { hit++ } /^cache_miss$/ { miss++ }
    END { printf "%d %d", hit, hit + miss }' "$1")
  size=$(ccache --print-stats | awk '$1 == "cache_size_kibibyte" { printf "%.1f", $2 / 1048576 }')
  echo "test.sh: compiler cache: ${counts% *} of ${counts#* } compilations taken from it ($CCACHE_DIR, $size GiB)"
  cleanups=$(ccache --print-stats | awk '$1 == "cleanups_performed" { print $2 }')
  if [ "${cleanups:-0}" -gt "$CLEANUPS" ]; then
    echo "test.sh: compiler cache: full, $((cleanups - CLEANUPS)) cleanups evicted objects (CCACHE_MAXSIZE)"
    CLEANUPS=$cleanups
  fi
}
# Ends the stage running (its seconds, its compilations), starts the next; prints the time since
# the start.
STAGE="" STAGE_STARTED=$STARTED STAGES=0
stage() {
  now=$(date +%s)
  if [ -n "$STAGE" ]; then
    compiler_cache "$CCACHE_STATSLOG"
    echo "test.sh: $((now - STAGE_STARTED)) s: $STAGE"
  fi
  STAGES=$((STAGES + 1))
  export CCACHE_STATSLOG="$LOGS/stage-$STAGES.stats"
  STAGE=$* STAGE_STARTED=$now
  echo "test.sh: [$((now - STARTED)) s] $*"
}
# Whether scripts/test-prebuild.sh runs: its process is there, not a zombie (the shell reaps
# background jobs only when it waits for them), and the one started (its start time: a reused
# pid is another process).
started_at() {
  sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f20
}
prebuilding() {
  state=$(sed 's/.*) //' "/proc/$PREBUILD/stat" 2>/dev/null | cut -c1)
  [ -n "$state" ] && [ "$state" != Z ] && [ "$(started_at "$PREBUILD")" = "$PREBUILD_STARTED" ]
}
# Waits for a step of scripts/test-prebuild.sh (sleeping, not spinning); says how long it took
# and what the compiler cache gave it, or fails with what it printed.
compiled_ahead() {
  while [ ! -f "$LOGS/prebuild/$1.done" ]; do
    if ! prebuilding && [ ! -f "$LOGS/prebuild/$1.done" ]; then
      cat "$LOGS/prebuild.log" "$LOGS/prebuild/$1.log" >&2 2>/dev/null || true
      echo "test.sh: failed: scripts/test-prebuild.sh ended before its step $1" >&2
      exit 1
    fi
    sleep 2
  done
  read -r status seconds <"$LOGS/prebuild/$1.done"
  if [ "$status" != 0 ]; then
    cat "$LOGS/prebuild/$1.log" >&2
    echo "test.sh: failed: $2, compiled ahead (scripts/test-prebuild.sh, step $1)" >&2
    exit 1
  fi
  echo "test.sh: $2: compiled ahead in $seconds s, meanwhile"
  case $1 in
    kubernetes) cat "$LOGS/prebuild/$1.log" ;;
    *) compiler_cache "$LOGS/prebuild/$1.stats" ;;
  esac
}
scripts/install-deps.sh
if [ -d "$CCACHE_DIR" ]; then
  echo "test.sh: compiler cache used: $(ccache --print-stats | awk '$1 == "files_in_cache" { print $2 }') files from earlier runs in $CCACHE_DIR"
else
  echo "test.sh: compiler cache empty: every compilation fills $CCACHE_DIR"
fi
CLEANUPS=$(ccache --print-stats 2>/dev/null | awk '$1 == "cleanups_performed" { print $2 }')
# The newer engines first: the build compiles the CRI client from the API they bring when it finds
# it at configure time. The other downloads, over the network, go on while the first build keeps
# the CPUs: NVIDIA's driver files (the script prints the directory it filled) and what
# Kubernetes' build needs (the binaries are built ahead, below). Each writes
# $LOGS/fetch/<name> (its output) and <name>.log.
stage "the engines of Debian 13 and sid"
GCR_NEWER_ENGINES=$(test/newer-engines.sh)
export GCR_NEWER_ENGINES
mkdir "$LOGS/fetch"
fetch() {
  name=$1
  shift
  setsid "$@" >"$LOGS/fetch/$name" 2>"$LOGS/fetch/$name.log" </dev/null &
  FETCHES="$FETCHES $name:$!"
}
fetch driver test/real-driver.sh
fetch kubernetes scripts/test-kubernetes.sh --download
# Waits for every download; prints what each said (whether its cache was used); fails on one that
# failed.
fetched() {
  for fetch in $FETCHES; do
    status=0
    wait "${fetch#*:}" || status=$?
    cat "$LOGS/fetch/${fetch%%:*}.log" >&2
    [ "$status" = 0 ] || { echo "test.sh: failed: downloading (${fetch%%:*})" >&2; exit 1; }
  done
  FETCHES=""
}

stage "build (NVIDIA's real driver files and Kubernetes' sources downloaded meanwhile)"
BUILD_DIR=${BUILD_DIR:-build} scripts/build.sh --clean
fetched
GCR_REAL_DRIVER=$(cat "$LOGS/fetch/driver")
export GCR_REAL_DRIVER

# From here the sanitized tree, then the Kubernetes binaries, build at the lowest priority.
mkdir "$LOGS/prebuild"
setsid nice -n 19 scripts/test-prebuild.sh "$LOGS/prebuild" </dev/null >"$LOGS/prebuild.log" 2>&1 &
PREBUILD=$!
PREBUILD_STARTED=$(started_at "$PREBUILD")

stage "unit and integration tests"
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure

stage "the suite under AddressSanitizer and UBSan (clang; the fuzz targets built too)"
compiled_ahead sanitized "the sanitized tree (scripts/configure-sanitized.sh)"
scripts/compiler-warnings.sh "$LOGS/prebuild/sanitized.log" >&2 ||
  { echo "test.sh: failed: the sanitized tree's build (above)" >&2; exit 1; }
build-asan/test/unit-tests
build-asan/test/integration-tests \
  -tce="dockerd*,containerd: *,ctr run --gpus*,end to end*,the image built offline*,containerd 1.7 and 2.1*,Docker 26 and 28*"

stage "a real Kubernetes node (Debian's kubernetes 1.20, containerd, the plugin), every parser fuzzed meanwhile"
compiled_ahead kubernetes "the Kubernetes binaries (scripts/test-kubernetes.sh --binaries)"
# The fuzzers take the CPUs for a fixed time; the node's checks mostly wait on pods and daemons.
# So the fuzzers run beside them, at the lowest priority (each says how many inputs it ran):
# 30 s each, as they ran about 60 % of the inputs of 20 s alone (the node's start takes CPUs),
# and the node's checks take longer than the fuzzers' ten rounds.
setsid nice -n 19 env GCR_FUZZ_DIR=build-asan scripts/fuzz.sh "${FUZZ_SECONDS:-30}" \
  </dev/null >"$LOGS/fuzz.log" 2>&1 &
FUZZ=$!
scripts/test-kubernetes.sh "${BUILD_DIR:-build}"

stage "every parser fuzzed for a short while (libFuzzer, the sanitized tree's targets, beside the node)"
status=0
wait "$FUZZ" || status=$?
FUZZ=""
cat "$LOGS/fuzz.log"
[ "$status" = 0 ] || { echo "test.sh: failed: fuzzing (above)" >&2; exit 1; }

stage "the packages, built by README's package block"
scripts/test-packages.sh

stage "README's commands as a user types them"
scripts/test-readme.sh
stage "all passed"
total=$(($(date +%s) - STARTED))
echo "test.sh: all passed in $total s ($((total / 60)) min $((total % 60)) s)"
