#!/bin/sh
# Prints the project's version: the one in CMakeLists.txt, the only place it is written.
set -eu
cd "$(dirname "$0")/.."
version=$(sed -n 's/^project(gpu-container-runtime VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
[ -n "$version" ] || { echo "version.sh: no version in CMakeLists.txt" >&2; exit 1; }
echo "$version"
