#!/bin/sh
# Builds the gpu-device-plugin container image offline, as one tarball that both
# `docker load -i` and `ctr images import` read (scripts/image-archive.sh): a single layer
# holding the built binary, the shared libraries it loads (found with ldd, the loader
# included), those NVIDIA's MPS programs load besides, and the default configuration. No
# registry and no network are needed.
#   scripts/build-plugin-image.sh [BUILD_DIR] [OUT]    (default: build, build/gpu-device-plugin.tar)
# The image is tagged gpu-device-plugin:<version> (the version in CMakeLists.txt).
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
OUT=${2:-$B/gpu-device-plugin.tar}
VERSION=$(scripts/version.sh)
BIN=$B/gpu-device-plugin
[ -x "$BIN" ] || { echo "build-plugin-image.sh: no $BIN: run scripts/build.sh first" >&2; exit 1; }
WORK=$(mktemp -d /tmp/gcr-image-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/rootfs

mkdir -p "$ROOT/usr/bin" "$ROOT/etc/gpu-container-runtime" "$ROOT/tmp"
chmod 1777 "$ROOT/tmp"
cp "$BIN" "$ROOT/usr/bin/gpu-device-plugin"
cp etc/config.toml "$ROOT/etc/gpu-container-runtime/config.toml"
ldd "$BIN" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' | sort -u |
  while read -r lib; do
    mkdir -p "$ROOT$(dirname "$lib")"
    cp -L "$lib" "$ROOT$lib"
  done
# What NVIDIA's MPS programs load besides libc (the runtime gives the container the driver's
# own files, not the C library's): glibc's compatibility libraries, from the libc copied above.
LIBC=$(ldd "$BIN" | awk '$1 == "libc.so.6" {print $3}')
for lib in libpthread.so.0 librt.so.1 libdl.so.2 libm.so.6; do
  cp -L "$(dirname "$LIBC")/$lib" "$ROOT$(dirname "$LIBC")/$lib"
done

scripts/image-archive.sh "$ROOT" "gpu-device-plugin:$VERSION" \
  '{"Entrypoint":["/usr/bin/gpu-device-plugin"],"Env":["PATH=/usr/bin:/bin"],"Labels":{"org.opencontainers.image.title":"gpu-device-plugin","org.opencontainers.image.version":"'"$VERSION"'"}}' \
  "$OUT"
echo "build-plugin-image.sh: $OUT (gpu-device-plugin:$VERSION, $(($(wc -c <"$OUT") / 1048576)) MiB)"
