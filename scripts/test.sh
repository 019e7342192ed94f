#!/bin/sh
# The whole test suite from a clean build: installs dependencies, builds, runs unit and
# integration tests (integration tests run real containers and need root).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build} scripts/build.sh --clean
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure
