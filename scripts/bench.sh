#!/bin/sh
# Prints how much the shim adds to runc: median ratio of paired runs (shim / runc) and the
# spread (p10..p90). Needs root (it runs containers). N pairs per case (default 300).
#   [BASELINE=FILE] scripts/bench.sh [N] [SECTION...]
#       sections: goals steps real compare host gpu hook hostile plugin (default: all)
# `goals` prints, for each of the speed goals, ours, the floor and the gap in both layouts;
# `steps` the shim's own GPU create, step by step, in both layouts, with the page faults of a
# create, of a pass-through call and of the wrapper; `real` the same steps and runc's lifecycle
# on NVIDIA's real driver files (test/real-driver.sh) with a host loader cache of real size;
# `compare` two builds' steps there, BASELINE's (another build's gpu-container-runtime) and
# this build's; `host` the same as `real` on this machine's own driver and GPU, where it has one.
set -eu
cd "$(dirname "$0")/.."
N=300
case ${1:-} in '' | *[!0-9]*) ;; *) N=$1 && shift ;; esac
[ "$N" -gt 0 ] || { echo "bench.sh: N must be at least 1" >&2; exit 2; }
SECTIONS=" $* "
want() { [ "$SECTIONS" = "  " ] || case $SECTIONS in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
BUILD_DIR=${BUILD_DIR:-build}
# A tree of programs built elsewhere (copied to a GPU machine, without CMake's files) is used as it is.
if [ -e "$BUILD_DIR/CMakeCache.txt" ] || [ ! -e "$BUILD_DIR/gpu-container-runtime" ]; then
  scripts/build.sh >/dev/null
else
  echo "bench.sh: the programs in $BUILD_DIR, built elsewhere"
fi
case $BUILD_DIR in /*) B=$BUILD_DIR ;; *) B=$(pwd)/$BUILD_DIR ;; esac
RUNC=$(command -v runc)
# Two layouts. "tmpfs bundle": as engines lay a container out on hosts, the bundle (config.json)
# and runc's state on a tmpfs, as containerd, CRI-O, podman and Docker keep them under /run, the
# rootfs a mount of a directory on disk, as an overlay's upper directory is. "disk bundle": the
# bundle on disk too, as an engine whose state is not on a tmpfs keeps it. runc's own state
# stays on the tmpfs in both.
WORK=$(mktemp -d /run/gcr-bench-XXXXXX)
DISK=$(mktemp -d /var/tmp/gcr-bench-XXXXXX)
cleanup() {
  runc --root "$WORK/root" delete --force gcr-bench-state >/dev/null 2>&1 || true
  umount -R "$WORK" 2>/dev/null
  findmnt -rno TARGET | grep "^$DISK" | sort -r | while read -r m; do umount "$m"; done
  rm -rf "$WORK" "$DISK" "$DISK.ext4"
}
trap cleanup EXIT
mount -t tmpfs -o mode=0755 gcr-bench "$WORK"
# The disk is a journaled ext4, as a host's container storage is. Where the one under /var/tmp
# has no journal (our VM's), ext4 looks past every inode freed in the last 60 s when it makes
# a file, reading each from its table: a first start's files, links and folders in the rootfs,
# made after the bench had just deleted a rootfs or a driver root, cost 0.2 to 0.4 ms of CPU
# each instead of 0.01, and the rows measured the bench's own deletions. There the bench makes
# a journaled ext4 in a file and mounts it on DISK.
disk_journal() {
  dev=$(findmnt -no SOURCE,FSTYPE -T /var/tmp | awk '$2 == "ext4" { sub(".*/", "", $1); print $1 }')
  [ -z "$dev" ] || [ "$(cat "/sys/fs/ext4/$dev/journal_task" 2>/dev/null)" != "<none>" ]
}
if ! disk_journal; then
  truncate -s 8G "$DISK.ext4" && mkfs.ext4 -q -F "$DISK.ext4" && mount -o loop "$DISK.ext4" "$DISK"
  echo "bench.sh: /var/tmp's ext4 has no journal: the disk is a journaled ext4 in $DISK.ext4"
fi
mkdir "$DISK/bundles" "$DISK/rootfs"
BUNDLES=$WORK
LAYOUT="tmpfs bundle"
on_disk() { BUNDLES=$DISK/bundles LAYOUT="disk bundle"; }
on_tmpfs() { BUNDLES=$WORK LAYOUT="tmpfs bundle"; }
# An empty bundle NAME in the current layout, its rootfs a bind mount of a fresh directory on disk.
fresh() {
  if mountpoint -q "$BUNDLES/$1/rootfs"; then umount "$BUNDLES/$1/rootfs"; fi
  rm -rf "${BUNDLES:?}/$1" "$DISK/rootfs/$1"
  mkdir -p "$BUNDLES/$1/rootfs" "$DISK/rootfs/$1"
  mount --bind "$DISK/rootfs/$1" "$BUNDLES/$1/rootfs"
}
# The programs run from a root-owned copy (the runtime refuses ones others could replace).
mkdir "$WORK/bin" && cp "$B/gpu-ctk" "$B/gpu-container-runtime" "$B/test/exec-wrapper" "$WORK/bin/"
SHIM=$WORK/bin/gpu-container-runtime
WRAPPER=$WORK/bin/exec-wrapper
CTK=$WORK/bin/gpu-ctk

# The configurations are the shipped file (every key, with its comments, as a package installs
# it), with only the runtime, the roots, the hook program and the log changed.
shipped_config() { # OUT RUNTIME [ROOT DEV_ROOT [LOG_LEVEL LOG_FILE]]
  sed -e "s|^runtimes = .*|runtimes = [\"$2\"]|" -e "s|^ctk-path = .*|ctk-path = \"$CTK\"|" \
    -e "s|^root = .*|root = \"${3:-/}\"|" -e "s|^dev-root = .*|dev-root = \"${4:-/}\"|" \
    -e "s|^log-level = .*|log-level = \"${5:-info}\"|" -e "s|^log-file = .*|log-file = \"${6:-}\"|" \
    -e "s|^state-dir = .*|state-dir = \"$WORK/state\"|" \
    etc/config.toml >"$1"
}
shipped_config "$WORK/config.toml" "$RUNC"
export GPU_CONTAINER_RUNTIME_CONFIG="$WORK/config.toml"
# A simulated host with 8 GPUs (for the sections that use one); gpu_config RUNTIME [LOG_LEVEL
# LOG_FILE] writes the configuration for it.
if want goals || want steps || want gpu || want hook || want hostile; then
  "$B/test/gcr-fixture" gpu-host "$DISK/host" 8 >"$WORK/driver.toml"
else
  printf '[driver]\nroot = "/"\ndev-root = "/"\n' >"$WORK/driver.toml"
fi
# DRIVER: the [driver] keys of the host the GPU rows run on.
DRIVER=$WORK/driver.toml HOST=""
gpu_config() {
  shipped_config "$WORK/gpu.toml" "$1" "$(sed -n 's/^root = "\(.*\)"/\1/p' "$DRIVER")" \
    "$(sed -n 's/^dev-root = "\(.*\)"/\1/p' "$DRIVER")" "${2:-info}" "${3:-}"
}
gpu_config "$RUNC"

lifecycle() {
  printf '%s --root %s create --bundle %s gcr-bench-life && %s --root %s start gcr-bench-life && %s --root %s delete --force gcr-bench-life' \
    "$1" "$WORK/root" "$2" "$1" "$WORK/root" "$1" "$WORK/root"
}
# The same, its spec first copied in place from FILE in the bundle.
whole() {
  printf 'cp %s/%s %s/config.json && %s' "$2" "$3" "$2" "$(lifecycle "$1" "$2")"
}
# The 1-GPU container (compute,utility, or CAPS) the goal is about and a container without GPU,
# both with glibc and an ld.so.cache as CUDA images have, in the current layout:
# gpu/original.json asks for the GPU, gpu/edited.json is what the shim made of it;
# plain/original.json.
CAPS=compute,utility
# IMAGE_LIBS > 0 (the real rows): the image also holds that many libraries of its own in
# /usr/lib/x86_64-linux-gnu, each a file and its soname link in its loader cache, and as many
# names in its /etc, as a distribution's image does; with the driver there (the .run layout)
# that folder is scanned, and the loader cache is written into that /etc.
IMAGE_LIBS=0
# A small library of SONAME libgcrpad0000.so.1, which sed renames: $DISK/pad.so, the build's
# (test/stubs/pad) or, without it, compiled here.
pad_library() {
  [ -e "$DISK/pad.so" ] && return 0
  if [ -e "$B/test/stubs/pad/libgcrpad0000.so.1.0.0" ]; then
    cp "$B/test/stubs/pad/libgcrpad0000.so.1.0.0" "$DISK/pad.so"
    return 0
  fi
  printf 'void gcr_pad(void) {}\n' >"$DISK/pad.c"
  cc -shared -nostdlib -fPIC -Wl,-soname,libgcrpad0000.so.1 -o "$DISK/pad.so" "$DISK/pad.c"
}
image_libraries() { # ROOTFS
  [ "$IMAGE_LIBS" -gt 0 ] || return 0
  mkdir -p "$1/usr/lib/x86_64-linux-gnu"
  for i in $(seq "$IMAGE_LIBS"); do
    name=$(printf 'libgcrimg%04d' "$i")
    sed "s/libgcrpad0000/$name/" "$DISK/pad.so" >"$1/usr/lib/x86_64-linux-gnu/$name.so.1.0.0"
    : >"$1/etc/gcr-image-$i.conf"
  done
  ldconfig -r "$1"
  # The cache newer than the directories it covers, as an image's last ldconfig leaves it.
  sleep 0.05 && touch "$1/etc/ld.so.cache"
}
gpu_and_plain() {
  fresh plain && "$B/test/gcr-fixture" glibc "$BUNDLES/plain" -- /bin/sh -c true
  cp "$BUNDLES/plain/config.json" "$BUNDLES/plain/original.json"
  fresh gpu && "$B/test/gcr-fixture" glibc "$BUNDLES/gpu" NVIDIA_VISIBLE_DEVICES=0 \
    NVIDIA_DRIVER_CAPABILITIES=$CAPS -- /bin/sh -c true
  image_libraries "$BUNDLES/gpu/rootfs"
  # The rootfs as the image holds it, for a first start (see steps).
  rm -rf "$DISK/rootfs/gpu.image" && cp -a "$DISK/rootfs/gpu" "$DISK/rootfs/gpu.image"
  cp "$BUNDLES/gpu/config.json" "$BUNDLES/gpu/original.json"
  GPU_CONTAINER_RUNTIME_CONFIG=$WORK/gpu.toml "$SHIM" --root "$WORK/root" create \
    --bundle "$BUNDLES/gpu" gcr-bench-gpu
  runc --root "$WORK/root" delete --force gcr-bench-gpu
  cp "$BUNDLES/gpu/config.json" "$BUNDLES/gpu/edited.json"
}

# The goals (issue 31), each against its floor measured in the same rounds: the floor is what
# any shim costs, a static do-nothing exec wrapper in front of runc. Ours is within the goal
# when the median gap (our ratio minus the floor's, per round) is.
goals() {
  fresh bundle && "$B/test/gcr-fixture" busybox "$BUNDLES/bundle" -- /bin/sh -c true
  echo "[$LAYOUT] no-GPU container, create + start + delete: shim / runc, floor the wrapper (median of $N rounds)"
  "$B/test/bench-pairs" "$N" --goal 0.02 /bin/sh -c "$(lifecycle "$RUNC" "$BUNDLES/bundle")" -- \
    /bin/sh -c "$(lifecycle "$SHIM" "$BUNDLES/bundle")" \
    --floor /bin/sh -c "$(lifecycle "$WRAPPER $RUNC" "$BUNDLES/bundle")"
  gpu_and_plain
  echo "[$LAYOUT] 1-GPU container (compute,utility) through the shim / a container without GPU under runc,"
  echo "  floor: runc on the shim's spec through the wrapper (median of $N rounds)"
  GPU_CONTAINER_RUNTIME_CONFIG=$WORK/gpu.toml "$B/test/bench-pairs" "$N" --goal 0.05 \
    /bin/sh -c "$(whole "$RUNC" "$BUNDLES/plain" original.json)" -- \
    /bin/sh -c "$(whole "$SHIM" "$BUNDLES/gpu" original.json)" \
    --floor /bin/sh -c "$(whole "$WRAPPER $RUNC" "$BUNDLES/gpu" edited.json)"
}

# "  LABEL (median ms, wall/CPU): <step> <wall>/<cpu>...; CPU of the steps <sum> (a call's steps
# summed: median <m> [95% CI]...)" from the `create steps` debug lines in LOG.
step_line() { # LABEL LOG CALLS
  sed -n 's/.*create steps: \(.*\) (ms wall\/CPU).*/\1/p' "$2" |
    tr ',' '\n' | sed 's/^ //; s/loader cache/loader-cache/' >"$WORK/steps.txt"
  line="  $1 (median ms, wall/CPU):"
  total=0
  for step in configuration request discovery edits loader-cache write; do
    wall=$(awk -v s="$step" '$1 == s { split($2, f, "/"); print f[1] }' "$WORK/steps.txt" | sort -n |
      awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    cpu=$(awk -v s="$step" '$1 == s { split($2, f, "/"); print f[2] }' "$WORK/steps.txt" | sort -n |
      awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    line="$line $step $wall/$cpu"
    total=$(awk -v a="$total" -v b="$cpu" 'BEGIN { printf "%.3f", a + b }')
  done
  # Each call's steps summed: their median, with its 95% confidence interval (the order
  # statistics n/2 -+ 0.98 sqrt(n) of the sorted sums).
  calls=$(sed -n 's/.*create steps: \(.*\) (ms wall\/CPU).*/\1/p' "$2" |
    awk -F', ' '{ t = 0; for (i = 1; i <= NF; i++) { n = split($i, f, "/"); t += f[n] } print t }' |
    sort -n | awk '{ v[NR] = $1 } END {
      lo = int(NR / 2 - 0.98 * sqrt(NR)); hi = int(NR / 2 + 1 + 0.98 * sqrt(NR) + 0.999)
      if (lo < 1) lo = 1; if (hi > NR) hi = NR
      printf "%.3f [95%% CI %.3f-%.3f]", v[int((NR + 1) / 2)], v[lo], v[hi] }')
  # A call that left the loader cache to the hook did less: the row would not be the path asked.
  hooked=$(grep -c 'the loader cache is left to the hook' "$2" 2>/dev/null || true)
  [ "${hooked:-0}" = 0 ] || line="$line [the loader cache left to the hook in $hooked of $3 calls]"
  echo "$line; CPU of the steps $total (a call's steps summed: median $calls)"
}

# step_line's row for N calls of the shim's 1-GPU create at debug level, PREP run before each.
step_medians() { # LABEL PREP
  gpu_config /bin/true debug "$WORK/steps.log"
  rm -f "$WORK/steps.log"
  for _ in $(seq "$N"); do
    sh -c "$2"
    GPU_CONTAINER_RUNTIME_CONFIG=$WORK/gpu.toml "$SHIM" create --bundle "$BUNDLES/gpu" x
  done
  step_line "$1" "$WORK/steps.log" "$N"
}

# The shim's own work on the 1-GPU create (runc replaced by /bin/true): the whole call against
# cp + /bin/true at the shipped log level, then N more calls at debug level, each step's median
# wall and CPU time from their debug lines (the rest of a call is exec, start-up and hand-off).
steps() {
  gpu_and_plain
  gpu_config /bin/true
  copy="cp $BUNDLES/gpu/original.json $BUNDLES/gpu/config.json"
  echo "[$LAYOUT$HOST] the shim's own 1-GPU create ($CAPS; runc replaced by /bin/true) against cp + /bin/true (median of $N pairs)"
  GPU_CONTAINER_RUNTIME_CONFIG=$WORK/gpu.toml "$B/test/bench-pairs" "$N" /bin/sh -c "$copy && /bin/true" -- \
    /bin/sh -c "$copy && $SHIM create --bundle $BUNDLES/gpu x"
  # Page faults of one call beyond those of /bin/true alone (which each call runs last): on a
  # VM that traps each fault to the hypervisor they are a large part of a short program's time.
  faults() { "$B/test/gcr-fixture" measure "GPU_CONTAINER_RUNTIME_CONFIG=$WORK/gpu.toml" -- "$@" | cut -d' ' -f4; }
  alone=$(faults /bin/true state x)
  $copy
  create=$(faults "$SHIM" create --bundle "$BUNDLES/gpu" x)
  echo "  page faults beyond /bin/true's: the shim's create $((create - alone)), a pass-through call" \
    "$(($(faults "$SHIM" state x) - alone)), the wrapper $(($(faults "$WRAPPER" /bin/true state x) - alone))"
  step_medians "its steps at debug level" "$copy"
  # A first start, as every pod's container is: the rootfs as the image holds it (no folder,
  # links or drop-in of ours, the image's own loader cache), which the shim then writes into.
  if [ -n "$HOST" ]; then
    step_medians "a first start's steps" "$copy && find $BUNDLES/gpu/rootfs -mindepth 1 -delete && cp -a $DISK/rootfs/gpu.image/. $BUNDLES/gpu/rootfs/"
    step_medians "its steps with the discovery cache emptied before each" "$copy && rm -rf $WORK/state/discovery"
  fi
  gpu_config "$RUNC"
}

if want goals; then
  fresh bundle && "$B/test/gcr-fixture" busybox "$BUNDLES/bundle" -- /bin/sh -c true
  echo "pass-through: runc state: shim / runc, floor the wrapper (median of $N rounds)"
  runc --root "$WORK/root" create --bundle "$BUNDLES/bundle" gcr-bench-state
  "$B/test/bench-pairs" "$N" --goal 0.02 "$RUNC" --root "$WORK/root" state gcr-bench-state -- \
    "$SHIM" --root "$WORK/root" state gcr-bench-state \
    --floor "$WRAPPER" "$RUNC" --root "$WORK/root" state gcr-bench-state
  runc --root "$WORK/root" delete --force gcr-bench-state
  on_tmpfs && goals
  on_disk && goals
  on_tmpfs
fi
if want steps; then
  on_tmpfs && steps
  on_disk && steps
  on_tmpfs
fi

# NVIDIA's real driver files (Debian 12's 535 packages, test/real-driver.sh) in Debian's layout,
# the .run installer's and one kept in /usr/local/nvidia (as on the H100 and H200 hosts), each
# copied to a root of its own with 650 more libraries beside the
# driver's (each its own SONAME, as a host's library directory holds) and a loader cache of the
# size hosts have (about 690 entries; a real H100 host had 522), the simulated /dev and /proc
# around them: the shim's own create step by step for compute,utility and for all
# capabilities, then runc's lifecycle on the spec the shim wrote against a container without GPU.
real_driver() { # LAYOUTS, VERSION and the driver configuration of NVIDIA's real files
  pad_library
  LAYOUTS=${GCR_REAL_DRIVER:-$(test/real-driver.sh | tail -n 1)}
  VERSION=$(head -n 1 "$LAYOUTS/../ready")
  DRIVER=$WORK/real.toml
}
simulated_driver() { # back to the simulated host of the other sections
  rm -rf "$DISK/real"
  HOST="" DRIVER=$WORK/driver.toml
  gpu_config "$RUNC"
}
real_host() { # LAYOUT
  rm -rf "$DISK/real" && mkdir "$DISK/real"
  cp -a "$LAYOUTS/$1" "$DISK/real/root"
  for i in $(seq 650); do
    name=$(printf 'libgcrpad%04d' "$i")
    sed "s/libgcrpad0000/$name/" "$DISK/pad.so" >"$DISK/real/root/usr/lib/x86_64-linux-gnu/$name.so.1"
  done
  ldconfig -r "$DISK/real/root"
  "$B/test/gcr-fixture" gpu-host "$DISK/real/host" 8 "version=$VERSION" |
    sed "s|^root = .*|root = \"$DISK/real/root\"|" >"$WORK/real.toml"
  HOST=", $1 layout, $(ldconfig -r "$DISK/real/root" -p | sed -n '1s/ libs.*//p') cache entries"
  # The discovery cache keeps nothing found from files changed less than 2 s before (a host's
  # driver files are older than that).
  sleep 3
  gpu_config "$RUNC"
}
real_rows() {
  for CAPS in compute,utility all; do steps; done
  CAPS=compute,utility
  # Without the build's library or a C compiler there is no library to copy.
  if pad_library 2>/dev/null; then
    base=$HOST
    HOST="$base, an image with 150 libraries of its own and 150 names in its /etc" IMAGE_LIBS=150 steps
    HOST=$base IMAGE_LIBS=0
  else
    echo "[$LAYOUT$HOST] no test/stubs/pad library and no C compiler: no row for an image with libraries of its own"
  fi
  gpu_and_plain
  echo "[$LAYOUT$HOST] runc on the shim's 1-GPU spec ($(grep -c '"destination"' "$BUNDLES/gpu/edited.json") mounts) / a container without GPU (median of $N pairs)"
  "$B/test/bench-pairs" "$N" /bin/sh -c "$(whole "$RUNC" "$BUNDLES/plain" original.json)" -- \
    /bin/sh -c "$(whole "$RUNC" "$BUNDLES/gpu" edited.json)"
}
if want real; then
  real_driver
  for layout in debian flat nvidia; do
    if [ ! -d "$LAYOUTS/$layout" ]; then
      echo "[$layout layout] not in $LAYOUTS (made by an older test/real-driver.sh): no rows"
      continue
    fi
    real_host "$layout"
    on_tmpfs && real_rows
  done
  simulated_driver
fi

# Two builds' own 1-GPU create (compute,utility) on NVIDIA's real files in Debian's layout
# (real_host), a restart and a first start: BASELINE (another build's gpu-container-runtime)
# against this build's, in alternating calls (which of the two goes first alternates too), each
# with its own discovery cache. Both are copied afresh every 20 rounds: two copies of one
# binary measured 4% apart on our VM (where a file's pages lie in memory matters to a program
# this short), more than most changes make.
compare_builds() {
  real_driver
  real_host debian
  on_tmpfs && gpu_and_plain
  gpu_config /bin/true debug "$WORK/steps.log"
  for build in base this; do
    sed "s|^state-dir = .*|state-dir = \"$WORK/state-$build\"|" "$WORK/gpu.toml" >"$WORK/$build.toml"
  done
  copy="cp $BUNDLES/gpu/original.json $BUNDLES/gpu/config.json"
  image="find $BUNDLES/gpu/rootfs -mindepth 1 -delete && cp -a $DISK/rootfs/gpu.image/. $BUNDLES/gpu/rootfs/"
  for start in "a restart" "a first start"; do
    prep=$copy
    [ "$start" = "a restart" ] || prep="$copy && $image"
    rm -f "$WORK/base.log" "$WORK/this.log"
    for i in $(seq 0 "$N"); do
      if [ $((i % 20)) = 0 ]; then
        rm -f "$WORK/bin/base" "$WORK/bin/this"
        cp "$BASELINE" "$WORK/bin/base" && cp "$B/gpu-container-runtime" "$WORK/bin/this"
      fi
      order="base this"
      [ $((i % 2)) = 0 ] || order="this base"
      for build in $order; do
        sh -c "$prep"
        rm -f "$WORK/steps.log"
        GPU_CONTAINER_RUNTIME_CONFIG=$WORK/$build.toml "$WORK/bin/$build" create --bundle "$BUNDLES/gpu" x
        # Round 0 fills each build's discovery cache: not counted.
        [ "$i" = 0 ] || cat "$WORK/steps.log" >>"$WORK/$build.log"
      done
    done
    echo "[$LAYOUT$HOST] two builds' own 1-GPU create (compute,utility), $start, alternating calls ($N each)"
    step_line "BASELINE $BASELINE" "$WORK/base.log" "$N"
    step_line "this build" "$WORK/this.log" "$N"
  done
  simulated_driver
}
if want compare; then
  if [ -z "${BASELINE:-}" ] || [ ! -x "${BASELINE:-}" ]; then
    echo "compare: BASELINE names no other build's gpu-container-runtime: no rows"
  else
    compare_builds
  fi
fi

# This machine's own driver and GPU as a node runs them (both roots /): the `real` rows, and a
# GPU container's whole lifecycle through the shim against one without GPU under runc.
if want host; then
  if [ -r /proc/driver/nvidia/version ]; then
    printf '[driver]\nroot = "/"\ndev-root = "/"\n' >"$WORK/host.toml"
    DRIVER=$WORK/host.toml
    HOST=", this host's driver $(awk '/NVRM/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+[.][0-9.]+$/) { print $i; exit } }' /proc/driver/nvidia/version),"
    HOST="$HOST $(ldconfig -p | sed -n '1s/ libs.*//p') cache entries"
    # procfs dates a file's inode from its first look-up, and the discovery cache keeps nothing
    # less than 2 s old: on a machine just started, the GPUs' information files are that new.
    cat /proc/driver/nvidia/gpus/*/information >/dev/null
    sleep 3
    gpu_config "$RUNC"
    on_tmpfs && real_rows
    echo "[$LAYOUT$HOST] a 1-GPU container (compute,utility) through the shim / a container without GPU under runc (median of $N pairs)"
    GPU_CONTAINER_RUNTIME_CONFIG=$WORK/gpu.toml "$B/test/bench-pairs" "$N" \
      /bin/sh -c "$(whole "$RUNC" "$BUNDLES/plain" original.json)" -- \
      /bin/sh -c "$(whole "$SHIM" "$BUNDLES/gpu" original.json)"
    simulated_driver
  else
    echo "host: this machine has no NVIDIA driver loaded (no /proc/driver/nvidia/version): no rows"
  fi
fi

if want gpu; then
  export GPU_CONTAINER_RUNTIME_CONFIG="$WORK/config.toml"
  fresh bundle && "$B/test/gcr-fixture" busybox "$WORK/bundle" -- /bin/sh -c true
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

  # GPU containers on the 8-GPU host. The baseline runs runc on the spec the shim produced
  # (same devices, mounts and hooks), so the ratio isolates the shim's own work.
  export GPU_CONTAINER_RUNTIME_CONFIG="$WORK/gpu.toml"
  gpu_case() {
    label=$1
    shift
    fresh gpu
    "$B/test/gcr-fixture" busybox "$WORK/gpu" "$@" -- /bin/sh -c true
    cp "$WORK/gpu/config.json" "$WORK/gpu/original.json"
    # Twice: the first run's hook leaves the image a loader cache, which every later run finds
    # (the shim then writes it at create), so both sides compare the same steady state.
    for _ in 1 2; do
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

  # The 1-GPU lifecycle beside the goal's rows: both containers through the shim (a node whose
  # engines run every container through it), and runc on the spec with the update-libraries hook
  # the shim writes for an image it must leave to the hook.
  gpu_and_plain
  fresh hooked && cp -a "$WORK/gpu/rootfs/." "$WORK/hooked/rootfs/"
  rm "$WORK/hooked/rootfs/etc/ld.so.cache" && cp "$WORK/gpu/original.json" "$WORK/hooked/config.json"
  "$SHIM" --root "$WORK/root" create --bundle "$WORK/hooked" gcr-bench-hooked
  runc --root "$WORK/root" delete --force gcr-bench-hooked
  cp "$WORK/hooked/config.json" "$WORK/gpu/hooked.json"
  no_gpu=$(whole "$RUNC" "$WORK/plain" original.json)
  echo "1-GPU container (compute,utility), both through the shim: GPU / no GPU (median of $N pairs)"
  "$B/test/bench-pairs" "$N" /bin/sh -c "$(whole "$SHIM" "$WORK/plain" original.json)" -- \
    /bin/sh -c "$(whole "$SHIM" "$WORK/gpu" original.json)"
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
fi

if want hook; then
  # One run of the hook, step by step, on the 1-GPU container's rootfs without runc's mounts
  # (each line: what the step adds, the median of paired differences): starting gpu-ctk,
  # reading the state and the bundle and opening the rootfs, the loader cache written in
  # process (what the shim does at create). Then what the hook does under runc, where the
  # libraries are mounts, and for an image without a cache: the sandbox with a do-nothing
  # ldconfig, and ldconfig itself.
  export GPU_CONTAINER_RUNTIME_CONFIG="$WORK/gpu.toml"
  gpu_and_plain
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
fi

if want hostile; then
  # The hostile images of issue 25 (a 16 MiB loader cache of 699,000 entries naming one long
  # string; 100 include lines over a 20,000-file directory; 64 libraries of 4,093 needed entries
  # each): what one GPU create costs the shim on each, once (runc replaced by /bin/true), and the
  # budget it declines the in-process update for (the hook's ldconfig does the work, sandboxed).
  gpu_config /bin/true
  export GPU_CONTAINER_RUNTIME_CONFIG="$WORK/gpu.toml"
  for kind in cache includes needed; do
    fresh hostile
    budget=$("$B/test/gcr-fixture" hostile "$kind" "$WORK/hostile")
    # shellcheck disable=SC2046
    set -- $("$B/test/gcr-fixture" measure -- "$SHIM" create --bundle "$WORK/hostile" gcr-bench-hostile)
    echo "hostile image ($kind): one GPU create, exit $1, peak RSS $(($2 / 1024)) MB, CPU $3 s (in 10 ms ticks); $budget"
  done
fi

if want plugin; then
  # The device plugin: admission calls from the kubelet's side, and its memory when idle, on
  # 8-GPU topologies and a 16-GPU one (NVML describes each).
  for fixture in dgx1 nvswitch8 sixteen; do
    "$B/test/plugin-bench" "$B/gpu-device-plugin" "$fixture" 1000
  done
fi
