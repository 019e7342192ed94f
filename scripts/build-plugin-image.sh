#!/bin/sh
# Builds the gpu-device-plugin container image offline, as one tarball that both
# `docker load -i` and `ctr images import` read (the docker-archive layout): a single layer
# holding the built binary, the shared libraries it loads (found with ldd, the loader
# included) and the default configuration. No registry and no network are needed.
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

# One deterministic layer, its config, the manifest.
tarball() { tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$1" -cf "$2" .; }
mkdir "$WORK/image"
tarball "$ROOT" "$WORK/layer.tar"
LAYER=$(sha256sum "$WORK/layer.tar" | cut -d' ' -f1)
mkdir "$WORK/image/$LAYER"
mv "$WORK/layer.tar" "$WORK/image/$LAYER/layer.tar"
cat >"$WORK/config.json" <<JSON
{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Entrypoint":["/usr/bin/gpu-device-plugin"],"Env":["PATH=/usr/bin:/bin"],"Labels":{"org.opencontainers.image.title":"gpu-device-plugin","org.opencontainers.image.version":"$VERSION"}},"rootfs":{"type":"layers","diff_ids":["sha256:$LAYER"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"scripts/build-plugin-image.sh"}]}
JSON
CONFIG=$(sha256sum "$WORK/config.json" | cut -d' ' -f1)
mv "$WORK/config.json" "$WORK/image/$CONFIG.json"
printf '[{"Config":"%s.json","RepoTags":["gpu-device-plugin:%s"],"Layers":["%s/layer.tar"]}]\n' \
  "$CONFIG" "$VERSION" "$LAYER" >"$WORK/image/manifest.json"
tarball "$WORK/image" "$OUT"
echo "build-plugin-image.sh: $OUT (gpu-device-plugin:$VERSION, $(($(wc -c <"$OUT") / 1048576)) MiB)"
