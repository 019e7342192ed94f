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
# Laid out as engines lay a container out: the bundle (config.json) and runc's state on a tmpfs,
# as containerd, CRI-O, podman and Docker keep them under /run (a tmpfs on hosts, not on every
# VM); the rootfs a mount of a directory on disk, as an overlay's upper directory is (the files
# the shim writes into it are synced, and cost what they cost there).
WORK=$(mktemp -d /run/gcr-bench-XXXXXX)
DISK=$(mktemp -d /var/tmp/gcr-bench-XXXXXX)
trap 'runc --root "$WORK/root" delete --force gcr-bench-state >/dev/null 2>&1 || true
  umount -R "$WORK" 2>/dev/null; rm -rf "$WORK" "$DISK"' EXIT
mount -t tmpfs -o mode=0755 gcr-bench "$WORK"
# An empty bundle NAME, its rootfs a bind mount of a fresh directory on disk.
fresh() {
  if mountpoint -q "$WORK/$1/rootfs"; then umount "$WORK/$1/rootfs"; fi
  rm -rf "$WORK/$1" "$DISK/$1"
  mkdir -p "$WORK/$1/rootfs" "$DISK/$1"
  mount --bind "$DISK/$1" "$WORK/$1/rootfs"
}
# The programs run from a root-owned copy (the runtime refuses ones others could replace).
mkdir "$WORK/bin" && cp "$B/gpu-ctk" "$B/gpu-container-runtime" "$B/test/exec-wrapper" "$WORK/bin/"
SHIM=$WORK/bin/gpu-container-runtime
WRAPPER=$WORK/bin/exec-wrapper

printf '[runtime]\nruntimes = ["%s"]\n' "$RUNC" >"$WORK/config.toml"
export GPU_CONTAINER_RUNTIME_CONFIG="$WORK/config.toml"
fresh bundle && "$B/test/gcr-fixture" busybox "$WORK/bundle" -- /bin/sh -c true

echo "pass-through: runc state (median of $N pairs)"
runc --root "$WORK/root" create --bundle "$WORK/bundle" gcr-bench-state
"$B/test/bench-pairs" "$N" "$RUNC" --root "$WORK/root" state gcr-bench-state -- \
  "$SHIM" --root "$WORK/root" state gcr-bench-state
echo "the floor: a static do-nothing exec wrapper in front of runc state (median of $N pairs)"
"$B/test/bench-pairs" "$N" "$RUNC" --root "$WORK/root" state gcr-bench-state -- \
  "$WRAPPER" "$RUNC" --root "$WORK/root" state gcr-bench-state
echo "the shim against that wrapper, directly (median of $N pairs)"
"$B/test/bench-pairs" "$N" "$WRAPPER" "$RUNC" --root "$WORK/root" state gcr-bench-state -- \
  "$SHIM" --root "$WORK/root" state gcr-bench-state
runc --root "$WORK/root" delete --force gcr-bench-state

lifecycle() {
  printf '%s --root %s create --bundle %s gcr-bench-life && %s --root %s start gcr-bench-life && %s --root %s delete --force gcr-bench-life' \
    "$1" "$WORK/root" "$WORK/bundle" "$1" "$WORK/root" "$1" "$WORK/root"
}
echo "no-GPU container: create + start + delete (median of $N pairs)"
"$B/test/bench-pairs" "$N" /bin/sh -c "$(lifecycle "$RUNC")" -- /bin/sh -c "$(lifecycle "$SHIM")"
echo "the floor: the do-nothing wrapper in front of the same three calls (median of $N pairs)"
"$B/test/bench-pairs" "$N" /bin/sh -c "$(lifecycle "$RUNC")" -- /bin/sh -c "$(lifecycle "$WRAPPER $RUNC")"

# A 1 MB spec (35,000 annotations, as a pod can carry): reading it must stay linear.
awk 'BEGIN { printf "{\"annotations\":{"; for (i = 0; i < 35000; i++) printf "%s\"example.com/k%d\":\"v%d\"", (i ? "," : ""), i, i; printf "}," }' >"$WORK/big.json"
sed '1s/^{//' "$WORK/bundle/config.json" >>"$WORK/big.json"
fresh big && cp -a "$WORK/bundle/rootfs/." "$WORK/big/rootfs/" && cp "$WORK/big.json" "$WORK/big/config.json"
echo "no-GPU container with a $(($(wc -c <"$WORK/big.json") / 1024)) KiB spec: create + delete (median of $N pairs)"
big() {
  printf '%s --root %s create --bundle %s gcr-bench-big && %s --root %s delete --force gcr-bench-big' \
    "$1" "$WORK/root" "$WORK/big" "$RUNC" "$WORK/root"
}
"$B/test/bench-pairs" "$N" /bin/sh -c "$(big "$RUNC")" -- /bin/sh -c "$(big "$SHIM")"

# GPU containers: a simulated host with 8 GPUs. The baseline runs runc on the spec the shim
# produced (same devices, mounts and hooks), so the ratio isolates the shim's own work.
"$B/test/gcr-fixture" gpu-host "$DISK/host" 8 >"$WORK/driver.toml"
gpu_config() {
  cat "$WORK/driver.toml" >"$WORK/gpu.toml"
  printf '[runtime]\nruntimes = ["%s"]\n[hooks]\nctk-path = "%s"\n' "$1" "$WORK/bin/gpu-ctk" >>"$WORK/gpu.toml"
}
gpu_config "$RUNC"
export GPU_CONTAINER_RUNTIME_CONFIG="$WORK/gpu.toml"
gpu_case() {
  label=$1
  shift
  fresh gpu
  "$B/test/gcr-fixture" busybox "$WORK/gpu" "$@" -- /bin/sh -c true
  cp "$WORK/gpu/config.json" "$WORK/gpu/original.json"
  # Twice: the first run's hook leaves the image a loader cache, which every later run finds
  # (the shim then writes it at create), so both sides compare the same steady state.
  for run in 1 2; do
    cp "$WORK/gpu/original.json" "$WORK/gpu/config.json"
    "$SHIM" --root "$WORK/root" create --bundle "$WORK/gpu" gcr-bench-gpu
    runc --root "$WORK/root" delete --force gcr-bench-gpu
  done
  cp "$WORK/gpu/config.json" "$WORK/gpu/edited.json"
  once() {
    printf 'cp %s/gpu/%s %s/gpu/config.json && %s --root %s create --bundle %s/gpu gcr-bench-gpu && %s --root %s delete --force gcr-bench-gpu' \
      "$WORK" "$2" "$WORK" "$1" "$WORK/root" "$WORK" "$RUNC" "$WORK/root"
  }
  echo "GPU container, $label: create + delete (median of $N pairs)"
  "$B/test/bench-pairs" "$N" /bin/sh -c "$(once "$RUNC" edited.json)" -- \
    /bin/sh -c "$(once "$SHIM" original.json)"
}
gpu_case "1 GPU, all capabilities" NVIDIA_VISIBLE_DEVICES=0 NVIDIA_DRIVER_CAPABILITIES=all
gpu_case "8 GPUs, all capabilities" NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=all
gpu_case "1 GPU, CUDA image (NVIDIA_REQUIRE_CUDA asks libcuda)" NVIDIA_VISIBLE_DEVICES=0 NVIDIA_REQUIRE_CUDA=cuda\>=12.0

# A GPU container's whole lifecycle against a container without GPU: through the shim (which
# writes the loader cache at create: no hook), and runc alone on the spec the shim wrote, and
# on the spec with the update-libraries hook the shim writes for an image it must leave to the
# hook (what the devices and mounts cost, and what the hook costs). Both sides copy their spec
# in place. Both have glibc and an ld.so.cache, as CUDA images do.
fresh plain && "$B/test/gcr-fixture" glibc "$WORK/plain" -- /bin/sh -c true
fresh gpu && "$B/test/gcr-fixture" glibc "$WORK/gpu" NVIDIA_VISIBLE_DEVICES=0 \
  NVIDIA_DRIVER_CAPABILITIES=compute,utility -- /bin/sh -c true
cp "$WORK/gpu/config.json" "$WORK/gpu/original.json"
fresh hooked && cp -a "$WORK/gpu/rootfs/." "$WORK/hooked/rootfs/"
rm "$WORK/hooked/rootfs/etc/ld.so.cache" && cp "$WORK/gpu/original.json" "$WORK/hooked/config.json"
"$SHIM" --root "$WORK/root" create --bundle "$WORK/hooked" gcr-bench-hooked
runc --root "$WORK/root" delete --force gcr-bench-hooked
cp "$WORK/hooked/config.json" "$WORK/gpu/hooked.json"
"$SHIM" --root "$WORK/root" create --bundle "$WORK/gpu" gcr-bench-gpu
runc --root "$WORK/root" delete --force gcr-bench-gpu
cp "$WORK/gpu/config.json" "$WORK/gpu/edited.json"
cp "$WORK/plain/config.json" "$WORK/plain/original.json"
whole() {
  printf 'cp %s/%s %s/config.json && %s --root %s create --bundle %s gcr-bench-life && %s --root %s start gcr-bench-life && %s --root %s delete --force gcr-bench-life' \
    "$2" "$3" "$2" "$1" "$WORK/root" "$2" "$1" "$WORK/root" "$1" "$WORK/root"
}
no_gpu=$(whole "$RUNC" "$WORK/plain" original.json)
echo "1-GPU container (compute,utility) through the shim vs a container without GPU: create + start + delete (median of $N pairs)"
"$B/test/bench-pairs" "$N" /bin/sh -c "$no_gpu" -- /bin/sh -c "$(whole "$SHIM" "$WORK/gpu" original.json)"
echo "the same, both through the shim (a node whose engines run every container through it) (median of $N pairs)"
"$B/test/bench-pairs" "$N" /bin/sh -c "$(whole "$SHIM" "$WORK/plain" original.json)" -- \
  /bin/sh -c "$(whole "$SHIM" "$WORK/gpu" original.json)"
echo "runc on the shim's 1-GPU spec (no hook) vs a container without GPU (median of $N pairs)"
"$B/test/bench-pairs" "$N" /bin/sh -c "$no_gpu" -- /bin/sh -c "$(whole "$RUNC" "$WORK/gpu" edited.json)"
echo "the floor for it: the same through the do-nothing wrapper (any shim giving these devices and mounts) (median of $N pairs)"
"$B/test/bench-pairs" "$N" /bin/sh -c "$no_gpu" -- /bin/sh -c "$(whole "$WRAPPER $RUNC" "$WORK/gpu" edited.json)"
echo "runc on the 1-GPU spec with the update-libraries hook vs a container without GPU (median of $N pairs)"
"$B/test/bench-pairs" "$N" /bin/sh -c "$no_gpu" -- /bin/sh -c "$(whole "$RUNC" "$WORK/gpu" hooked.json)"

# The same container on an image with 300 more library links (to a file that is no library,
# which ldconfig passes by), its cache written after them: at create the shim reads every
# library link of the directories ldconfig scans, to know where they lead.
fresh links && "$B/test/gcr-fixture" glibc "$WORK/links" NVIDIA_VISIBLE_DEVICES=0 \
  NVIDIA_DRIVER_CAPABILITIES=compute,utility -- /bin/sh -c true
echo "not a library" >"$WORK/links/rootfs/lib/x86_64-linux-gnu/pad.data"
for i in $(seq 300); do
  ln -s pad.data "$WORK/links/rootfs/lib/x86_64-linux-gnu/libpad$i.so.1"
done
ldconfig -r "$WORK/links/rootfs" 2>/dev/null
CACHE=$WORK/links/rootfs/etc/ld.so.cache
find "$WORK/links/rootfs" ! -newer "$CACHE" ! -path "$CACHE" \
  -exec touch -h -d "@$(($(stat -c %Y "$CACHE") - 60))" {} +
cp "$WORK/links/config.json" "$WORK/links/original.json"
"$SHIM" --root "$WORK/root" create --bundle "$WORK/links" gcr-bench-links
runc --root "$WORK/root" delete --force gcr-bench-links
echo "1-GPU container through the shim, its image with 300 more library links vs without (median of $N pairs)"
"$B/test/bench-pairs" "$N" /bin/sh -c "$(whole "$SHIM" "$WORK/gpu" original.json)" -- \
  /bin/sh -c "$(whole "$SHIM" "$WORK/links" original.json)"

# One run of the hook, step by step, on that container's rootfs without runc's mounts (each
# line: what the step adds, the median of paired differences): starting gpu-ctk, reading the
# state and the bundle and opening the rootfs, the loader cache written in process (what the
# shim now does at create). Then what the hook does under runc, where the libraries are
# mounts, and for an image without a cache: the sandbox with a do-nothing ldconfig, and
# ldconfig itself.
cp "$WORK/gpu/edited.json" "$WORK/gpu/config.json"
fresh bare && cp -a "$WORK/gpu/rootfs/." "$WORK/bare/rootfs/"
cp "$WORK/gpu/edited.json" "$WORK/bare/config.json"
state() {
  printf '{"ociVersion":"1.0.2","id":"gcr-bench-gpu","status":"creating","pid":1,"bundle":"%s"}' "$1"
}
state "$WORK/gpu" >"$WORK/state.json"
state "$WORK/bare" >"$WORK/bare-state.json"
hook_step() {
  echo "hook breakdown, $1 (median of $N pairs)"
  "$B/test/bench-pairs" "$N" /bin/sh -c "$2" -- /bin/sh -c "$3"
}
CTK=$WORK/bin/gpu-ctk
LIBS=/usr/lib/x86_64-linux-gnu
ON_GPU="<$WORK/state.json"
BARE="rm -f $WORK/bare/rootfs/etc/ld.so.cache && "
ON_BARE="<$WORK/bare-state.json"
hook_step "exec and loader (gpu-ctk --version vs a static do-nothing)" "$WRAPPER $ON_GPU" \
  "$CTK --version $ON_GPU"
hook_step "state, bundle and rootfs" "$CTK --version $ON_GPU" "$CTK hook create-symlinks $ON_GPU"
hook_step "the loader cache, in process" "$CTK hook create-symlinks $ON_GPU" \
  "$CTK hook update-ldcache --folder $LIBS $ON_GPU"
hook_step "no cache in the image: the sandbox, ldconfig replaced by a do-nothing" \
  "$BARE $CTK hook create-symlinks $ON_BARE" \
  "$BARE $CTK hook update-ldcache --ldconfig-path @$WRAPPER --folder $LIBS $ON_BARE"
hook_step "no cache in the image: ldconfig itself" \
  "$BARE $CTK hook update-ldcache --ldconfig-path @$WRAPPER --folder $LIBS $ON_BARE" \
  "$BARE $CTK hook update-ldcache --ldconfig-path @/sbin/ldconfig --folder $LIBS $ON_BARE"

# The shim's own work on create, with the low-level runtime replaced by /bin/true.
gpu_config /bin/true
fresh gpu && "$B/test/gcr-fixture" busybox "$WORK/gpu" NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=all -- /bin/sh -c true
cp "$WORK/gpu/config.json" "$WORK/gpu/original.json"
echo "the shim's own work, 8 GPUs (create with runc replaced by /bin/true, against cp + /bin/true)"
"$B/test/bench-pairs" "$N" /bin/sh -c "cp $WORK/gpu/original.json $WORK/gpu/config.json && /bin/true" -- \
  /bin/sh -c "cp $WORK/gpu/original.json $WORK/gpu/config.json && $SHIM create --bundle $WORK/gpu x"

# The hostile images of issue 25 (a 16 MiB loader cache of 699,000 entries naming one long
# string; 100 include lines over a 20,000-file directory; 64 libraries of 4,093 needed entries
# each): what one GPU create costs the shim on each, once (runc replaced by /bin/true), and the
# budget it declines the in-process update for (the hook's ldconfig does the work, sandboxed).
for kind in cache includes needed; do
  fresh hostile
  budget=$("$B/test/gcr-fixture" hostile "$kind" "$WORK/hostile")
  # shellcheck disable=SC2046
  set -- $("$B/test/gcr-fixture" measure -- "$SHIM" create --bundle "$WORK/hostile" gcr-bench-hostile)
  echo "hostile image ($kind): one GPU create, exit $1, peak RSS $(($2 / 1024)) MB, CPU $3 s (in 10 ms ticks); $budget"
done

# The device plugin: admission calls from the kubelet's side, and its memory when idle, on
# 8-GPU topologies and a 16-GPU one (NVML describes each).
for fixture in dgx1 nvswitch8 sixteen; do
  "$B/test/plugin-bench" "$B/gpu-device-plugin" "$fixture" 1000
done
