#!/bin/sh
# The main job: a container started through gpu-container-runtime and real runc.
# Installs dependencies, builds, then runs a busybox container through the shim.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null
scripts/build.sh >/dev/null
B=$(pwd)/${BUILD_DIR:-build}
WORK=$(mktemp -d /tmp/gcr-demo-XXXXXX)
trap 'rm -rf "$WORK"' EXIT
printf '[runtime]\nruntimes = ["%s"]\n' "$(command -v runc)" >"$WORK/config.toml"
"$B/test/gcr-fixture" busybox "$WORK/bundle" /bin/sh -c 'echo "hello from a container started by gpu-container-runtime"'
GPU_CONTAINER_RUNTIME_CONFIG="$WORK/config.toml" \
  "$B/gpu-container-runtime" --root "$WORK/runc" run --bundle "$WORK/bundle" "gcr-demo-$$"
