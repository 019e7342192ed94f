#!/bin/sh
# The main job: a container that asks for a GPU gets it, through gpu-container-runtime and
# real runc. Without a GPU in this machine the container runs on a simulated GPU host the
# project builds (4 GPUs whose index order differs from their device minors, stub driver
# libraries, a stub nvidia-smi). Installs dependencies and builds what it runs first. Run as root.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh >/dev/null
# Built as scripts/build.sh builds (the same tree and flags, so the compiler cache answers with
# what a development build compiled; a compiler warning fails), but only the demo's programs:
# the shim, gpu-ctk, the fixture tool, the stub driver libraries and the probe the container runs.
BUILD_DIR=${BUILD_DIR:-build}
scripts/build.sh gpu-container-runtime gpu-ctk gcr-fixture gcr-stubs dlopen-probe >/dev/null
B=$(pwd)/$BUILD_DIR
WORK=$(mktemp -d /tmp/gcr-demo-XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# The runtime runs only programs nobody but root can replace (README, Security): use copies in
# this root-owned directory, whoever owns the checkout.
mkdir "$WORK/bin" && cp "$B/gpu-ctk" "$B/gpu-container-runtime" "$WORK/bin/"
"$B/test/gcr-fixture" gpu-host "$WORK/host" >"$WORK/config.toml"
printf '[runtime]\nruntimes = ["%s"]\n[hooks]\nctk-path = "%s"\n' "$(command -v runc)" "$WORK/bin/gpu-ctk" >>"$WORK/config.toml"
export GPU_CONTAINER_RUNTIME_CONFIG="$WORK/config.toml"

echo "== the host: gpu-ctk info"
"$WORK/bin/gpu-ctk" info
echo
echo "== a container with NVIDIA_VISIBLE_DEVICES=1 (GPU 1 is /dev/nvidia0 on this host)"
"$B/test/gcr-fixture" glibc "$WORK/bundle" NVIDIA_VISIBLE_DEVICES=1 NVIDIA_REQUIRE_CUDA=cuda\>=12.0 -- /bin/sh -c '
  echo "devices:"; ls -l /dev | grep nvidia
  echo "driver libraries:"; ls /usr/lib/x86_64-linux-gnu | grep -E "^lib(cuda|nvidia)"
  echo "nvidia-smi:"; nvidia-smi
  echo "dlopen(libcuda.so.1):"; /probe'
"$WORK/bin/gpu-container-runtime" --root "$WORK/runc" run --bundle "$WORK/bundle" "gcr-demo-$$"
echo
echo "== a container asking for a GPU this host does not have"
"$B/test/gcr-fixture" busybox "$WORK/bad" NVIDIA_VISIBLE_DEVICES=7 -- /bin/true
"$WORK/bin/gpu-container-runtime" --root "$WORK/runc" run --bundle "$WORK/bad" "gcr-demo-bad-$$" || true
