#!/bin/sh
# Prints how much the shim adds to runc: median ratio of paired runs (shim / runc) and the
# spread (p10..p90). Needs root (it runs containers). N pairs per case (default 300).
set -eu
cd "$(dirname "$0")/.."
N=${1:-300}
BUILD_DIR=${BUILD_DIR:-build}
scripts/build.sh >/dev/null
B=$(pwd)/$BUILD_DIR
RUNC=$(command -v runc)
WORK=$(mktemp -d /tmp/gcr-bench-XXXXXX)
trap 'runc --root "$WORK/root" delete --force gcr-bench-state >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

printf '[runtime]\nruntimes = ["%s"]\n' "$RUNC" >"$WORK/config.toml"
export GPU_CONTAINER_RUNTIME_CONFIG="$WORK/config.toml"
"$B/test/gcr-fixture" busybox "$WORK/bundle" /bin/sh -c true

echo "pass-through: runc state (median of $N pairs)"
runc --root "$WORK/root" create --bundle "$WORK/bundle" gcr-bench-state
"$B/test/bench-pairs" "$N" "$RUNC" --root "$WORK/root" state gcr-bench-state -- \
  "$B/gpu-container-runtime" --root "$WORK/root" state gcr-bench-state
runc --root "$WORK/root" delete --force gcr-bench-state

lifecycle() {
  printf '%s --root %s create --bundle %s gcr-bench-life && %s --root %s start gcr-bench-life && %s --root %s delete --force gcr-bench-life' \
    "$1" "$WORK/root" "$WORK/bundle" "$1" "$WORK/root" "$1" "$WORK/root"
}
echo "no-GPU container: create + start + delete (median of $N pairs)"
"$B/test/bench-pairs" "$N" /bin/sh -c "$(lifecycle "$RUNC")" -- /bin/sh -c "$(lifecycle "$B/gpu-container-runtime")"
