#!/bin/sh
# The whole test suite from a clean build: installs dependencies, builds, runs unit and
# integration tests (they run real containers and engines, so they need root), then builds
# the .deb and .rpm and exercises them (scripts/test-packages.sh: install, remove, purge on
# this machine).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build} scripts/build.sh --clean
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure
scripts/test-packages.sh
