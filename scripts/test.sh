#!/bin/sh
# The whole test suite from a clean build, as root (real containers and engines run):
#   1. install dependencies, build, run the unit and integration tests;
#   2. the same tests built with AddressSanitizer and UBSan (the dockerd test is left out:
#      the sanitizer runtime cannot map its memory inside dockerd's containerd shim);
#   3. build the .deb and .rpm and exercise them (scripts/test-packages.sh: the .rpm in a
#      throw-away root; the .deb upgraded, removed and purged on this machine).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
BUILD_DIR=${BUILD_DIR:-build} scripts/build.sh --clean
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure

echo "test.sh: the suite under AddressSanitizer and UBSan"
rm -rf build-asan
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DGCR_SANITIZE=ON -DGCR_WERROR=ON >/dev/null
cmake --build build-asan >/dev/null
build-asan/test/unit-tests
build-asan/test/integration-tests -tce="dockerd*"

scripts/test-packages.sh
