#!/bin/sh
# Configures (scripts/configure.sh: the .deb's compiler flags, warnings as errors) and builds into
# $BUILD_DIR (default: build). Pass --clean to start afresh. A compiler warning in what the build
# printed fails it too: the compiler cache replays a warning with its object, and where -Werror is
# left out of the cache's hash (CCACHE_IGNOREOPTIONS, as scripts/test.sh sets it so that the
# package build takes this build's objects) an object compiled without it may answer.
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ "${1:-}" = "--clean" ]; then
  rm -rf "$BUILD_DIR"
fi
scripts/configure.sh "$BUILD_DIR" >/dev/null
LOG=$(mktemp /tmp/gcr-build-XXXXXX)
trap 'rm -f "$LOG" "$LOG.status"' EXIT
{
  status=0
  cmake --build "$BUILD_DIR" 2>&1 || status=$?
  echo "$status" >"$LOG.status"
} | tee "$LOG"
[ "$(cat "$LOG.status")" = 0 ] || exit 1
warned=0
scripts/compiler-warnings.sh "$LOG" >/dev/null || warned=$?
case $warned in
  0) echo "build.sh: failed: the compiler warns (above)" >&2; exit 1 ;;
  1) ;;
  *) echo "build.sh: failed: cannot read the build's output ($LOG)" >&2; exit 1 ;;
esac
