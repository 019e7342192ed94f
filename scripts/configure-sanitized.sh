#!/bin/sh
# Configures DIR (default build-asan) as the sanitized build: clang, Debug, AddressSanitizer and
# UBSan, every library also instrumented for libFuzzer (GCR_FUZZ), warnings as errors. One tree
# holds the sanitized test programs and executables (scripts/test.sh runs the suite from it) and
# the fuzz targets (scripts/fuzz.sh), so the libraries are compiled once for both. Configuring an
# existing tree again with these options changes nothing in it. It links with LLVM's lld: its
# sanitized programs are large (debug information, instrumentation), and ld.bfd links them in
# minutes where lld takes seconds. Its debug information is line tables only: the sanitizers'
# reports name every frame's function, file and line from them, and clang compiles the tree about
# a fifth faster than with full debug information.
#
#   scripts/configure-sanitized.sh [DIR]
set -eu
cd "$(dirname "$0")/.."
CC=clang CXX=clang++ exec cmake -S . -B "${1:-build-asan}" -G Ninja -DCMAKE_BUILD_TYPE=Debug \
  -DGCR_FUZZ=ON -DGCR_WERROR=ON -DCMAKE_C_FLAGS_DEBUG=-gline-tables-only \
  -DCMAKE_CXX_FLAGS_DEBUG=-gline-tables-only -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
  -DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld -DCMAKE_MODULE_LINKER_FLAGS=-fuse-ld=lld
