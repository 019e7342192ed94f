#!/bin/sh
# Configures (scripts/configure.sh: the .deb's compiler flags, warnings as errors) and builds into
# $BUILD_DIR (default: build): every target, or the TARGETs named. Pass --clean to start afresh.
# A compiler warning in what the build printed fails it too, and cleans the tree so that the next
# build fails on it again: the compiler cache replays a warning with its object, and where
# -Werror is left out of the cache's hash (CCACHE_IGNOREOPTIONS, as scripts/test.sh sets it so
# that the package build takes this build's objects) an object compiled without it may answer.
#   scripts/build.sh [--clean] [TARGET...]
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ "${1:-}" = "--clean" ]; then
  rm -rf "$BUILD_DIR"
  shift
fi
scripts/configure.sh "$BUILD_DIR" >/dev/null
LOGS=$(mktemp -d /tmp/gcr-build-XXXXXX)
trap 'rm -rf "$LOGS"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
{
  status=0
  if [ $# -gt 0 ]; then
    cmake --build "$BUILD_DIR" --target "$@" 2>&1 || status=$?
  else
    cmake --build "$BUILD_DIR" 2>&1 || status=$?
  fi
  echo "$status" >"$LOGS/status"
} | tee "$LOGS/build.log"
[ "$(cat "$LOGS/status")" = 0 ] || exit 1
if ! scripts/compiler-warnings.sh "$LOGS/build.log" >&2; then
  cmake --build "$BUILD_DIR" --target clean >/dev/null
  echo "build.sh: failed: its output has warnings or cannot be read (above); $BUILD_DIR cleaned" >&2
  exit 1
fi
