#!/bin/sh
# Configures and builds into $BUILD_DIR (default: build). Pass --clean to start afresh.
set -eu
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
if [ "${1:-}" = "--clean" ]; then
  rm -rf "$BUILD_DIR"
fi
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGCR_WERROR=ON >/dev/null
cmake --build "$BUILD_DIR"
