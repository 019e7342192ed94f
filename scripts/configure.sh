#!/bin/sh
# Configures DIR (default build) as the development build: the compiler flags of the .deb
# (Debian's dpkg-buildflags with deb/rules' DEB_BUILD_MAINT_OPTIONS, CPPFLAGS folded into CFLAGS
# and CXXFLAGS as debhelper does for CMake, build type None), so that the suite tests and
# benchmarks the code users install and, with -Werror and the locale out of the compiler cache's
# hash (scripts/test.sh), the package build takes every product object from the cache; plus
# warnings as errors. The flags are asked for with nothing of the caller's environment
# (DEB_CFLAGS_APPEND and the like): scripts/package.sh's builds, run as README's package block
# runs them, see none of it either. The test programs add -O0 to these (test/CMakeLists.txt).
# Configuring an existing tree again with these options changes nothing in it.
#
#   scripts/configure.sh [DIR]
set -eu
cd "$(dirname "$0")/.."
OPTIONS=$(sed -n 's/^export DEB_BUILD_MAINT_OPTIONS *= *//p' deb/rules)
flags() {
  env -i PATH="$PATH" DEB_BUILD_MAINT_OPTIONS="$OPTIONS" dpkg-buildflags --get "$1"
}
CFLAGS=$(flags CFLAGS) CXXFLAGS=$(flags CXXFLAGS) CPPFLAGS=$(flags CPPFLAGS) LDFLAGS=$(flags LDFLAGS)
exec cmake -S . -B "${1:-build}" -G Ninja -DCMAKE_BUILD_TYPE=None -DGCR_WERROR=ON \
  "-DCMAKE_C_FLAGS=$CFLAGS $CPPFLAGS" "-DCMAKE_CXX_FLAGS=$CXXFLAGS $CPPFLAGS" \
  "-DCMAKE_EXE_LINKER_FLAGS=$LDFLAGS" "-DCMAKE_SHARED_LINKER_FLAGS=$LDFLAGS" \
  "-DCMAKE_MODULE_LINKER_FLAGS=$LDFLAGS"
