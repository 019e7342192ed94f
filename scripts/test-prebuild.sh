#!/bin/sh
# Compiles ahead, for scripts/test.sh, what its later stages build, while its earlier stages'
# tests wait on containers, engines and daemons (scripts/test.sh runs this at the lowest CPU
# priority, so the tests keep the CPUs they use):
#   sanitized   the sanitized tree (scripts/configure-sanitized.sh into build-asan; a clean tree
#               but for the fuzz stage's corpora and findings), which the sanitized stage runs;
#   kubernetes  the Kubernetes binaries (scripts/test-kubernetes.sh --binaries: built from the
#               sources scripts/test.sh downloaded during its first build, unless its cache
#               holds them), which the Kubernetes stage runs.
# (The packages' objects need nothing here: the development build compiles them, with the same
# flags, scripts/configure.sh.)
# For each step, in order, DIR gets <step>.log (what it printed), <step>.stats (the compiler
# cache's answer for each compilation: ccache's stats_log) and, once it ended, <step>.done: its
# exit status and seconds. A step that fails ends the run. Run in a process group of its own
# (setsid), it stops when its parent does (a signal to the group: every step's programs end).
#
#   scripts/test-prebuild.sh DIR
set -eu
cd "$(dirname "$0")/.."
DIR=$1
JOB=""
trap 'if [ -n "$JOB" ]; then wait "$JOB" || true; fi; exit 143' HUP INT TERM
PARENT=$PPID
(
  while kill -0 "$PARENT" 2>/dev/null; do sleep 5; done
  kill -- "-$$" 2>/dev/null
) &

# A step runs as a job of its own (so that a signal here does not wait for it to end, and `set -e`
# holds inside it).
step() {
  name=$1
  shift
  started=$(date +%s)
  status=0
  export CCACHE_STATSLOG="$DIR/$name.stats"
  "$@" >"$DIR/$name.log" 2>&1 &
  JOB=$!
  wait "$JOB" || status=$?
  JOB=""
  echo "$status $(($(date +%s) - started))" >"$DIR/$name.done.tmp"
  mv "$DIR/$name.done.tmp" "$DIR/$name.done"
  [ "$status" = 0 ]
}

sanitized() {
  if [ -d build-asan ]; then
    find build-asan -mindepth 1 -maxdepth 1 ! -name corpus ! -name findings -exec rm -rf {} +
  fi
  scripts/configure-sanitized.sh build-asan
  cmake --build build-asan
}

step sanitized sanitized
step kubernetes scripts/test-kubernetes.sh --binaries
