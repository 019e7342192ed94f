#!/bin/sh
# Writes ROOTFS as a container image tarball that both `docker load -i` and `ctr images import`
# read (the docker-archive layout), offline: one deterministic layer, its image configuration
# (CONFIG is the JSON object of its "config" field: Entrypoint, Env, Labels...), the manifest
# tagging it TAG.
#   scripts/image-archive.sh ROOTFS TAG CONFIG OUT
set -eu
[ $# = 4 ] || { echo "usage: scripts/image-archive.sh ROOTFS TAG CONFIG OUT" >&2; exit 2; }
ROOTFS=$1 TAG=$2 CONFIG=$3 OUT=$4
WORK=$(mktemp -d /tmp/gcr-image-archive-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
tarball() { tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$1" -cf "$2" .; }
mkdir "$WORK/image"
tarball "$ROOTFS" "$WORK/layer.tar"
LAYER=$(sha256sum "$WORK/layer.tar" | cut -d' ' -f1)
mkdir "$WORK/image/$LAYER"
mv "$WORK/layer.tar" "$WORK/image/$LAYER/layer.tar"
cat >"$WORK/config.json" <<JSON
{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":$CONFIG,"rootfs":{"type":"layers","diff_ids":["sha256:$LAYER"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"scripts/image-archive.sh"}]}
JSON
DIGEST=$(sha256sum "$WORK/config.json" | cut -d' ' -f1)
mv "$WORK/config.json" "$WORK/image/$DIGEST.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]\n' \
  "$DIGEST" "$TAG" "$LAYER" >"$WORK/image/manifest.json"
tarball "$WORK/image" "$OUT"
