#!/bin/sh
# A real single-node Kubernetes cluster on 127.0.0.1, built from Debian 12's own `kubernetes`
# source package (1.20: kubelet, kube-apiserver, kube-scheduler, kube-controller-manager, built
# with Debian's Go 1.19 as Kubernetes 1.20 builds itself, in GOPATH mode from its vendor/, with
# the providerless tag), etcd and kubectl from Debian's packages, containerd from Debian
# configured by `gpu-ctk runtime configure` from the file `containerd config default` writes,
# and gpu-device-plugin, on a simulated GPU host (gcr-fixture gpu-host). Then what a user does
# with it: node capacity, pods asking for 1, 2 and too many GPUs, every device-list strategy,
# the RuntimeClass, a kubelet restart, a GPU lost and found again, the shipped DaemonSet, and
# MPS sharing from it (the shipped patch, NVIDIA's real control daemon in the plugin's pod).
#   scripts/test-kubernetes.sh [BUILD_DIR]     (needs root; default build)
#   scripts/test-kubernetes.sh --download      only what the build needs, fetched into the cache
#   scripts/test-kubernetes.sh --binaries      only the binaries, fetched and built into the cache
#
# Downloads (Debian's archive, through a private sources list: the machine's apt configuration
# is neither used nor changed) and the built binaries are cached in $GCR_TEST_CACHE (default
# /var/cache/gpu-container-runtime-tests)/kubernetes, with Go's build cache; the output says
# whether the cache was used. scripts/test.sh downloads during its first build and builds the
# binaries at the lowest CPU priority beside the sanitized tests. Every process is started here
# and stopped by pid; the teardown checks that no process, mount or file is left.
set -eu
cd "$(dirname "$0")/.."
MODE=node
case ${1:-} in
  --download) MODE=download ;;
  --binaries) MODE=binaries ;;
  *) B=$(cd "${1:-build}" && pwd) ;;
esac
CACHE=${GCR_TEST_CACHE:-/var/cache/gpu-container-runtime-tests}/kubernetes
ARCHIVE=${GCR_DEBIAN_ARCHIVE:-http://deb.debian.org/debian}
SECURITY=${GCR_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
TARGETS="kubelet kube-apiserver kube-scheduler kube-controller-manager"
# Go, etcd and kubectl, besides the kubernetes source package.
PACKAGES="golang-1.19-go golang-1.19-src etcd-server kubernetes-client"
# Bump when the build below changes: binaries built by another revision are rebuilt.
BUILD_REVISION=1

say() { echo "test-kubernetes: $*" >&2; }
die() {
  say "FAILED: $*"
  exit 1
}
[ "$(id -u)" = 0 ] || die "needs root (a kubelet and containerd)"

# --- The binaries: fetched and built once, then cached. -----------------------------------------
APT="-o Dir::Etc::SourceList=$CACHE/apt/sources.list -o Dir::Etc::SourceParts=/dev/null
  -o Dir::State::Lists=$CACHE/apt/lists -o Dir::Cache=$CACHE/apt/cache
  -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
  -o Dir::State::status=/dev/null -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
fetch() {
  rm -rf "$CACHE/apt" "$CACHE/debs" "$CACHE/src"
  mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial" "$CACHE/debs" "$CACHE/src"
  for kind in deb deb-src; do
    echo "$kind [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $ARCHIVE bookworm main"
    echo "$kind [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $SECURITY bookworm-security main"
  done >"$CACHE/apt/sources.list"
  # shellcheck disable=SC2086
  apt-get $APT -q update >"$CACHE/apt/update.log" 2>&1 ||
    die "cannot reach Debian's archive ($ARCHIVE): $(tail -n 3 "$CACHE/apt/update.log" | tr '\n' ' ')"
  # shellcheck disable=SC2086
  (cd "$CACHE/debs" && apt-get $APT -q download $PACKAGES >"$CACHE/apt/download.log" 2>&1) ||
    die "cannot download Go, etcd and kubectl: $(tail -n 3 "$CACHE/apt/download.log" | tr '\n' ' ')"
  # shellcheck disable=SC2086
  (cd "$CACHE/src" && apt-get $APT -q source --download-only kubernetes >"$CACHE/apt/source.log" 2>&1) ||
    die "cannot download the kubernetes source: $(tail -n 3 "$CACHE/apt/source.log" | tr '\n' ' ')"
}

keep_gocache() {
  if [ -d "$CACHE/src/k8s/_output/local/go/cache" ]; then
    rm -rf "$CACHE/gocache"
    mv "$CACHE/src/k8s/_output/local/go/cache" "$CACHE/gocache"
  fi
}

build() {
  (cd "$CACHE" && rm -rf root bin src/k8s)
  mkdir -p "$CACHE/root" "$CACHE/bin"
  for deb in "$CACHE"/debs/*.deb; do dpkg-deb -x "$deb" "$CACHE/root"; done
  dpkg-source -q -x --no-check "$CACHE"/src/kubernetes_*.dsc "$CACHE/src/k8s" >/dev/null
  GO=$CACHE/root/usr/lib/go-1.19
  # Kubernetes 1.20's own build (hack/make-rules): its code generators, then the commands, in
  # GOPATH mode from vendor/ (Go's module mode refuses this tree). No cgo, as Debian builds it.
  # Go's build cache, kept from the last build (Kubernetes' scripts keep it in _output), is put
  # back however the build ends (a failure, or scripts/test.sh stopping what it built ahead):
  # what Go compiled so far serves the next build.
  trap keep_gocache EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  trap 'exit 129' HUP
  if [ -d "$CACHE/gocache" ]; then
    mkdir -p "$CACHE/src/k8s/_output/local/go"
    mv "$CACHE/gocache" "$CACHE/src/k8s/_output/local/go/cache"
  fi
  (cd "$CACHE/src/k8s" && env GOROOT="$GO" PATH="$GO/bin:$PATH" \
    HOME="$CACHE/home" CGO_ENABLED=0 GOFLAGS=-tags=providerless \
    make WHAT="$(for t in $TARGETS; do printf 'cmd/%s ' "$t"; done)" >"$CACHE/build.log" 2>&1) ||
    die "cannot build Kubernetes: $(tail -n 5 "$CACHE/build.log" | tr '\n' ' ') (see $CACHE/build.log)"
  for t in $TARGETS; do cp "$CACHE/src/k8s/_output/bin/$t" "$CACHE/bin/"; done
  keep_gocache
  trap - EXIT TERM INT HUP
  cp "$CACHE/root/usr/bin/etcd" "$CACHE/root/usr/bin/kubectl" "$CACHE/bin/"
  (cd "$CACHE" && rm -rf src/k8s home)
}

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9
KEY="revision $BUILD_REVISION; $TARGETS"
# What was downloaded stays after a build (the .debs and the source package): a build of another
# revision, or one that failed, starts from it.
DOWNLOADED="$ARCHIVE $SECURITY; $PACKAGES; source kubernetes"
started=$(date +%s)
if [ -f "$CACHE/ready" ] && [ "$(cat "$CACHE/ready")" = "$KEY" ]; then
  say "cache used: Kubernetes $("$CACHE/bin/kubelet" --version | cut -d' ' -f2), etcd and kubectl in $CACHE/bin (nothing downloaded or built)"
else
  rm -f "$CACHE/ready"
  if [ -f "$CACHE/downloaded" ] && [ "$(cat "$CACHE/downloaded")" = "$DOWNLOADED" ]; then
    say "cache used for the downloads ($CACHE/debs, $CACHE/src); no binaries of this revision yet"
  else
    say "cache not used ($CACHE has no binaries of this revision): downloading from $ARCHIVE"
    rm -f "$CACHE/downloaded"
    fetch
    echo "$DOWNLOADED" >"$CACHE/downloaded"
    say "downloaded in $(($(date +%s) - started)) s: $(find "$CACHE/src" "$CACHE/debs" -name '*.deb' -o -name '*.gz' | wc -l) files ($(du -sh "$CACHE/src" "$CACHE/debs" | cut -f1 | tr '\n' ' '))"
  fi
  if [ "$MODE" != download ]; then
    started=$(date +%s)
    build
    echo "$KEY" >"$CACHE/ready"
    say "built $TARGETS in $(($(date +%s) - started)) s (Go's build cache: $(du -sh "$CACHE/gocache" | cut -f1))"
  fi
fi
exec 9>&-
[ "$MODE" = node ] || exit 0
KBIN=$CACHE/bin

# --- The node: a simulated GPU host, containerd, a control plane, a kubelet. ---------------------
# What the kubelet, containerd and CNI make outside this test's directory: the pods' cgroups
# (cgroupfs driver), their network namespaces, the bridge, and files in the directories below
# (the kubelet serves device plugins in /var/lib/kubelet/device-plugins whatever its --root-dir,
# and keeps pod logs in /var/log; CNI caches results in /var/lib/cni; containerd's shims keep
# their sockets and runc's state in /run/containerd). Each is checked or listed first; what
# was not there before is removed at the end, and nothing that was is touched.
BRIDGE=gcr-br0
PLUGIN_DIR=/var/lib/kubelet/device-plugins
MPS_ROOT=/run/gpu-container-runtime/mps
HOST_DIRS="/var/lib/kubelet /var/log/pods /var/log/containers /var/lib/cni /run/containerd $MPS_ROOT"
if [ -e /sys/fs/cgroup/memory/kubepods ] || [ -e /sys/fs/cgroup/kubepods ]; then
  die "a kubepods cgroup exists already: is a kubelet running on this machine?"
fi
if ip link show "$BRIDGE" >/dev/null 2>&1; then die "interface $BRIDGE exists already"; fi
[ ! -e "$MPS_ROOT" ] || die "$MPS_ROOT exists: is gpu-device-plugin sharing GPUs through MPS on this machine?"
[ ! -S "$PLUGIN_DIR/kubelet.sock" ] || die "$PLUGIN_DIR/kubelet.sock exists: is a kubelet running on this machine?"
NETNS_BEFORE=$(echo /var/run/netns/*)
# shellcheck disable=SC2086
HOST_FILES_BEFORE=$(find $HOST_DIRS 2>/dev/null | sort)
# What is in those directories now and was not before.
host_files_new() {
  # shellcheck disable=SC2086
  find $HOST_DIRS 2>/dev/null | sort | comm -13 "$T/host-files-before" -
}

T=$(mktemp -d /var/tmp/gcr-k8s-XXXXXX)
echo "$HOST_FILES_BEFORE" >"$T/host-files-before"
NODE=gcr-node
export KUBECONFIG="$T/pki/admin.kubeconfig"
# Ports of this test only, all on 127.0.0.1.
ETCD_PORT=23790 API_PORT=26443 KUBELET_PORT=20250
# Starts NAME CMD... in the background, its output in $T/logs/NAME.log; remembers its pid.
pid_var() { echo "PID_$(echo "$1" | tr -c 'a-z0-9\n' _)"; }
start() {
  name=$1
  shift
  "$@" >"$T/logs/$name.log" 2>&1 &
  eval "$(pid_var "$name")=$!"
}
pid_of() { eval "echo \${$(pid_var "$1"):-}"; }
# Stops NAME (SIGTERM, then SIGKILL after 10 s) and forgets its pid.
stop() {
  pid=$(pid_of "$1")
  eval "$(pid_var "$1")="
  [ -n "$pid" ] && kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}
# Waits up to SECONDS for CMD... to succeed.
wait_for() {
  seconds=$1
  shift
  for _ in $(seq $((seconds * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  return 1
}
kubectl() { "$KBIN/kubectl" --request-timeout=30s "$@"; }
ctr_k8s() { ctr --address "$T/containerd/containerd.sock" -n k8s.io "$@"; }
no_containers() { [ -z "$(ctr_k8s containers list -q 2>/dev/null)" ]; }

# --- teardown: the DaemonSet, then the pods (the kubelet stops their containers and unmounts
# their volumes), then every daemon by pid, then what is left outside $T. -----------------------
teardown() {
  status=$?
  set +e
  if [ -n "$(pid_of kubelet)" ] && kill -0 "$(pid_of kubelet)" 2>/dev/null; then
    kubectl delete daemonsets --all -n kube-system --wait=true >/dev/null 2>&1
    kubectl delete pods --all --all-namespaces --grace-period=0 --force >/dev/null 2>&1
    wait_for 60 no_containers
  fi
  for name in plugin kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do
    stop "$name"
  done
  # containerd's shims outlive it by design: the tasks left (none, if the pods went) are killed.
  if [ -n "$(pid_of containerd)" ]; then
    for id in $(ctr_k8s tasks list -q 2>/dev/null); do ctr_k8s tasks kill -s KILL "$id"; done
    stop containerd
  fi
  for pid in $(pgrep -f "containerd-shim-runc-v2 -namespace k8s.io .*-address $T/" 2>/dev/null); do
    kill -9 "$pid"
  done
  # A cgroup with a process in it cannot be removed: what is left below kubepods is a container
  # process left running.
  for cgroup in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [ -d "$cgroup" ] && find "$cgroup" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  ip link del "$BRIDGE" 2>/dev/null
  links_left=$(ip -o link show | grep -c "$BRIDGE")
  # A sandbox's network namespace that containerd did not remove before it stopped goes now.
  netns_left=""
  for ns in /var/run/netns/*; do
    [ -e "$ns" ] || continue
    case " $NETNS_BEFORE " in *" $ns "*) continue ;; esac
    umount "$ns" 2>/dev/null
    rm -f "$ns" 2>/dev/null || netns_left="$netns_left $ns"
  done
  # Mounts that would not go are counted, then detached so that $T can be removed.
  left=0
  for m in $(findmnt -rno TARGET | grep "^$T/" | sort -r); do
    umount "$m" 2>/dev/null || { left=$((left + 1)); umount -l "$m"; }
  done
  procs=$(pgrep -f "$T/" | grep -vc "^$$\$")
  host_files_new | sort -r | while read -r f; do rm -rf "$f"; done
  files_left=$(host_files_new | wc -l)
  rm -rf "$T"
  if [ "$status" = 0 ] && [ "$left" != 0 ]; then say "FAILED: teardown left $left mounts"; status=1; fi
  if [ "$status" = 0 ] && [ "$procs" != 0 ]; then say "FAILED: teardown left $procs processes"; status=1; fi
  if [ "$status" = 0 ] && [ "$links_left" != 0 ]; then say "FAILED: teardown left network interfaces"; status=1; fi
  if [ "$status" = 0 ] && [ -n "$netns_left" ]; then say "FAILED: teardown left network namespaces$netns_left"; status=1; fi
  if [ "$status" = 0 ] && [ "$files_left" != 0 ]; then say "FAILED: teardown left $files_left files in $HOST_DIRS"; status=1; fi
  if [ "$status" = 0 ] && ls -d /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods >/dev/null 2>&1; then
    say "FAILED: teardown left the kubepods cgroups (a container process still runs)"
    status=1
  fi
  [ "$status" = 0 ] && say "teardown: no process, mount, interface, network namespace, cgroup or file left"
  exit "$status"
}
trap teardown EXIT
trap 'exit 1' INT TERM
mkdir -p "$T/logs" "$T/pki" "$T/bin" "$T/cni" "$T/cdi"


# Our programs from a root-owned copy (the runtime refuses programs others could replace).
cp "$B/gpu-container-runtime" "$B/gpu-ctk" "$B/gpu-device-plugin" "$T/bin/"
"$B/test/gcr-fixture" gpu-host "$T/host" 4 >"$T/driver.toml"
DRIVER_ROOT=$(sed -n 's/^root = "\(.*\)"/\1/p' "$T/driver.toml")
DEV_ROOT=$(sed -n 's/^dev-root = "\(.*\)"/\1/p' "$T/driver.toml")

# Our configuration: the shipped file, with the simulated host's roots, the node's kubelet
# directory, and DEVICE_LIST (one strategy per plugin run).
gcr_config() {
  sed -e "s|^root = .*|root = \"$DRIVER_ROOT\"|" -e "s|^dev-root = .*|dev-root = \"$DEV_ROOT\"|" \
    -e "s|^ctk-path = .*|ctk-path = \"$T/bin/gpu-ctk\"|" \
    -e "s|^runtimes = .*|runtimes = [\"$(command -v runc)\"]|" \
    -e "s|^log-file = .*|log-file = \"$T/logs/shim.log\"|" \
    -e "s|^kubelet-dir = .*|kubelet-dir = \"$PLUGIN_DIR\"|" \
    -e "s|^labels-file = .*|labels-file = \"$T/labels\"|" \
    -e "s|^device-list = .*|device-list = [\"$1\"]|" \
    -e "s|^accept-volume-mounts = .*|accept-volume-mounts = true|" \
    -e "s|^spec-dirs = .*|spec-dirs = [\"$T/cdi\"]|" \
    etc/config.toml >"$T/config.toml"
}
gcr_config envvar
export GPU_CONTAINER_RUNTIME_CONFIG="$T/config.toml"

# PKI: one CA; the apiserver's serving certificate; a client certificate per component.
openssl_quiet() { openssl "$@" >/dev/null 2>&1 || die "openssl $*"; }
openssl_quiet req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=gcr-test-ca \
  -keyout "$T/pki/ca.key" -out "$T/pki/ca.crt"
cert() { # NAME SUBJECT [SAN]
  openssl_quiet req -newkey rsa:2048 -nodes -subj "$2" -keyout "$T/pki/$1.key" -out "$T/pki/$1.csr"
  printf 'extendedKeyUsage=serverAuth,clientAuth\n%s\n' "${3:+subjectAltName=$3}" >"$T/pki/$1.ext"
  openssl_quiet x509 -req -in "$T/pki/$1.csr" -CA "$T/pki/ca.crt" -CAkey "$T/pki/ca.key" \
    -CAcreateserial -days 2 -extfile "$T/pki/$1.ext" -out "$T/pki/$1.crt"
}
kubeconfig() { # NAME: a kubeconfig with NAME's certificate
  cat >"$T/pki/$1.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: gcr, cluster: {server: "https://127.0.0.1:$API_PORT", certificate-authority: "$T/pki/ca.crt"}}]
users: [{name: $1, user: {client-certificate: "$T/pki/$1.crt", client-key: "$T/pki/$1.key"}}]
contexts: [{name: gcr, context: {cluster: gcr, user: $1}}]
current-context: gcr
KC
}
cert apiserver /CN=kube-apiserver "IP:127.0.0.1,IP:10.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
cert admin "/O=system:masters/CN=gcr-admin" && kubeconfig admin
cert scheduler /CN=system:kube-scheduler && kubeconfig scheduler
cert controller-manager /CN=system:kube-controller-manager && kubeconfig controller-manager
cert kubelet "/O=system:nodes/CN=system:node:$NODE" "IP:127.0.0.1" && kubeconfig kubelet
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client"
openssl_quiet genrsa -out "$T/pki/sa.key" 2048
openssl_quiet rsa -in "$T/pki/sa.key" -pubout -out "$T/pki/sa.pub"

# containerd: the file it writes itself, its state under $T, then configured by gpu-ctk.
mkdir -p "$T/containerd"
containerd config default >"$T/containerd/config.toml"
sed -i -e "s|^root = .*|root = \"$T/containerd/root\"|" -e "s|^state = .*|state = \"$T/containerd/state\"|" \
  -e "s|^  address = \"/run/containerd/containerd.sock\"|  address = \"$T/containerd/containerd.sock\"|" \
  -e "s|path = \"/opt/containerd\"|path = \"$T/containerd/opt\"|" \
  -e "s|bin_dir = \"/opt/cni/bin\"|bin_dir = \"/usr/lib/cni\"|" \
  -e "s|conf_dir = \"/etc/cni/net.d\"|conf_dir = \"$T/cni\"|" \
  -e "s|restrict_oom_score_adj = false|restrict_oom_score_adj = true|" "$T/containerd/config.toml"
"$T/bin/gpu-ctk" runtime configure --runtime=containerd --config "$T/containerd/config.toml" \
  --set-as-default --runtime-path "$T/bin/gpu-container-runtime" >"$T/logs/configure.log" 2>&1 ||
  die "gpu-ctk runtime configure on containerd's own file: $(cat "$T/logs/configure.log")"
# Pods not on the node's network get a bridge of their own that leads nowhere: no gateway, no
# masquerading, no route off the host. Its addresses are kept under $T.
cat >"$T/cni/10-gcr-bridge.conflist" <<CNI
{"cniVersion": "0.4.0", "name": "gcr-bridge", "plugins": [{"type": "bridge", "bridge": "$BRIDGE",
 "isGateway": false, "ipMasq": false, "ipam": {"type": "host-local", "dataDir": "$T/cni-ipam",
 "ranges": [[{"subnet": "10.244.77.0/24"}]]}}]}
CNI
start containerd containerd --config "$T/containerd/config.toml"
wait_for 30 ctr_k8s version || die "containerd did not start: $(tail -n 5 "$T/logs/containerd.log")"

# Images, offline: busybox for the pods, and the pause image under the name containerd's
# configuration gives (it is never pulled), written by scripts/image-archive.sh as the plugin's is.
image() { # NAME:TAG ROOTFS ENTRYPOINT-JSON
  tar=$T/images/$(echo "$1" | tr -c 'a-z0-9\n' _).tar
  scripts/image-archive.sh "$2" "$1" "{\"Entrypoint\":$3,\"Env\":[\"PATH=/bin\"]}" "$tar"
  ctr_k8s images import "$tar" >/dev/null || die "cannot import $1"
}
"$B/test/gcr-fixture" busybox "$T/images/busybox-bundle" -- /bin/sh >/dev/null
image gcr-test/busybox:1 "$T/images/busybox-bundle/rootfs" '["/bin/sh"]'
PAUSE=$(sed -n "s/^ *sandbox_image = [\"']\(.*\)[\"']\$/\1/p" "$T/containerd/config.toml")
[ -n "$PAUSE" ] || die "no sandbox_image in containerd's configuration"
image "$PAUSE" "$T/images/busybox-bundle/rootfs" '["/bin/busybox","sleep","2147483647"]'
scripts/build-plugin-image.sh "$B" "$T/images/plugin.tar" >/dev/null
ctr_k8s images import "$T/images/plugin.tar" >/dev/null || die "cannot import the plugin's image"

# The control plane.
start etcd "$KBIN/etcd" --name gcr --data-dir "$T/etcd" \
  --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
  --listen-peer-urls http://127.0.0.1:23800 --initial-advertise-peer-urls http://127.0.0.1:23800 \
  --initial-cluster gcr=http://127.0.0.1:23800
start kube-apiserver "$KBIN/kube-apiserver" --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
  --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" --insecure-port 0 \
  --cert-dir "$T/apiserver" --client-ca-file "$T/pki/ca.crt" \
  --tls-cert-file "$T/pki/apiserver.crt" --tls-private-key-file "$T/pki/apiserver.key" \
  --service-account-key-file "$T/pki/sa.pub" --service-account-signing-key-file "$T/pki/sa.key" \
  --service-account-issuer https://kubernetes.default.svc --service-cluster-ip-range 10.0.0.0/24 \
  --authorization-mode Node,RBAC --allow-privileged=true \
  --kubelet-client-certificate "$T/pki/apiserver-kubelet-client.crt" \
  --kubelet-client-key "$T/pki/apiserver-kubelet-client.key" --kubelet-preferred-address-types InternalIP
wait_for 60 kubectl get --raw /readyz || die "kube-apiserver is not ready: $(tail -n 5 "$T/logs/kube-apiserver.log")"
start kube-controller-manager "$KBIN/kube-controller-manager" --kubeconfig "$T/pki/controller-manager.kubeconfig" \
  --port 0 --secure-port 0 --leader-elect=false --use-service-account-credentials \
  --service-account-private-key-file "$T/pki/sa.key" --root-ca-file "$T/pki/ca.crt"
start kube-scheduler "$KBIN/kube-scheduler" --kubeconfig "$T/pki/scheduler.kubeconfig" \
  --port 0 --secure-port 0 --leader-elect=false

# The kubelet, on containerd's CRI.
cat >"$T/kubelet.yaml" <<KUBELET
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBELET_PORT
readOnlyPort: 0
healthzPort: 0
authentication: {anonymous: {enabled: false}, webhook: {enabled: false}, x509: {clientCAFile: "$T/pki/ca.crt"}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failSwapOn: false
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", nodefs.inodesFree: "1%", imagefs.available: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
tlsCertFile: "$T/pki/kubelet.crt"
tlsPrivateKeyFile: "$T/pki/kubelet.key"
KUBELET
start_kubelet() {
  start kubelet "$KBIN/kubelet" --config "$T/kubelet.yaml" --kubeconfig "$T/pki/kubelet.kubeconfig" \
    --container-runtime remote --container-runtime-endpoint "unix://$T/containerd/containerd.sock" \
    --root-dir "$T/kubelet" --hostname-override "$NODE"
}
start_kubelet
node_ready() {
  [ "$(kubectl get node "$NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]
}
wait_for 120 node_ready || die "the node is not Ready: $(tail -n 5 "$T/logs/kubelet.log")"
say "node $NODE Ready: $("$KBIN/kubelet" --version), $(containerd --version | cut -d' ' -f1,3)"

# --- What a user does with it. ---------------------------------------------------------------------
CHECKS=0
ok() {
  CHECKS=$((CHECKS + 1))
  say "ok: $*"
}
jsonpath() { kubectl get "$1" "$2" -o jsonpath="$3"; }
gpus_of_node() { jsonpath node "$NODE" "{.status.$1.nvidia\.com/gpu}"; }
gpus_are() { [ "$(gpus_of_node capacity)" = "$1" ] && [ "$(gpus_of_node allocatable)" = "$1" ]; }
# A pod on the node's network (pods have loopback only) that prints the GPU device nodes it sees,
# then waits; SHELL, if given, runs first (what it prints is logged before the GPUs).
# gpu_pod NAME GPUS [RUNTIME-CLASS] [SHELL]
gpu_pod() {
  kubectl apply -f - >/dev/null <<POD
apiVersion: v1
kind: Pod
metadata: {name: $1}
spec:
  hostNetwork: true
  restartPolicy: Never
  automountServiceAccountToken: false
  terminationGracePeriodSeconds: 1
  ${3:+runtimeClassName: $3}
  containers:
    - name: c
      image: gcr-test/busybox:1
      command: ["/bin/sh", "-c", "${4:+$4; }echo GPUS \$(cd /dev && ls -d nvidia[0-9]* 2>/dev/null); exec busybox sleep 600"]
      resources: {limits: {nvidia.com/gpu: $2}}
POD
}
running() { [ "$(jsonpath pod "$1" '{.status.phase}')" = Running ]; }
# What container CONTAINER of pod NAME printed, from the log the kubelet keeps: the apiserver
# cannot reach this kubelet for `kubectl logs` (it listens on 127.0.0.1 only, and a kubelet
# refuses a loopback node IP).
pod_log() { cat "/var/log/pods/default_$1_$(jsonpath pod "$1" '{.metadata.uid}')/$2"/*.log 2>/dev/null | cut -d' ' -f4-; }
# The GPU device nodes pod NAME printed (sorted, space-separated).
gpus_seen() {
  wait_for 60 running "$1" || die "pod $1 is not running: $(kubectl describe pod "$1" | tail -n 3)"
  wait_for 30 sh -c "cat /var/log/pods/default_$1_$(jsonpath pod "$1" '{.metadata.uid}')/c/*.log | grep -q ' GPUS'" ||
    die "pod $1 printed nothing"
  pod_log "$1" c | sed -n 's/^GPUS //p' | tr ' ' '\n' | grep . | sort | tr '\n' ' ' | sed 's/ $//'
}
count() { echo "$1" | wc -w; }
delete_pods() { kubectl delete pod "$@" --grace-period=0 --force --wait=true >/dev/null 2>&1 || true; }

# gpu-ctk doctor on the configured node: every check passes.
doctor() {
  PATH=$KBIN:$PATH "$T/bin/gpu-ctk" doctor --engine containerd \
    --containerd-config "$T/containerd/config.toml" --kubelet-config "$T/kubelet.yaml"
}

# The plugin as a host process (the systemd unit's way).
start_plugin() {
  gcr_config "$1"
  start plugin "$T/bin/gpu-device-plugin"
  wait_for 30 gpus_are 4 || die "the node does not show 4 GPUs with device-list $1: $(tail -n 5 "$T/logs/plugin.log")"
}
start_plugin envvar
ok "registration: node capacity and allocatable nvidia.com/gpu = 4"
doctor >"$T/logs/doctor.log" 2>&1 || die "gpu-ctk doctor failed on the configured node: $(grep -i fail "$T/logs/doctor.log")"
ok "gpu-ctk doctor passes every check on containerd's own file, configured ($(grep -c '^ok' "$T/logs/doctor.log") ok)"

gpu_pod gcr-one 1
gpu_pod gcr-two 2
one=$(gpus_seen gcr-one)
two=$(gpus_seen gcr-two)
[ "$(count "$one")" = 1 ] || die "a 1-GPU pod sees '$one'"
[ "$(count "$two")" = 2 ] || die "a 2-GPU pod sees '$two'"
[ "$(echo "$one $two" | tr ' ' '\n' | sort -u | wc -l)" = 3 ] || die "two pods share a GPU: '$one' and '$two'"
ok "a 1-GPU pod sees exactly its GPU ($one), a 2-GPU pod its two ($two), none shared"
preferred=$(sed -n 's/.*preferred \([^ ]*\) for 2 of .*/\1/p' "$T/logs/plugin.log" | tail -n 1)
[ -n "$preferred" ] || die "the kubelet never asked GetPreferredAllocation for the 2-GPU pod"
as_set() { echo "$1" | tr ',' '\n' | sort | tr '\n' ' '; }
allocated=$(sed -n 's/.* allocated \([^ ]*,[^ ]*\)$/\1/p' "$T/logs/plugin.log" | tail -n 1)
[ "$(as_set "$allocated")" = "$(as_set "$preferred")" ] ||
  die "the 2-GPU pod did not get the preferred pair $preferred: $(grep allocated "$T/logs/plugin.log")"
ok "the kubelet asked GetPreferredAllocation and the 2-GPU pod got the pair preferred ($preferred)"
gpu_pod gcr-too-many 2
insufficient() { kubectl get events --field-selector involvedObject.name=gcr-too-many | grep -q "Insufficient nvidia.com/gpu"; }
wait_for 30 insufficient || die "a pod asking for more GPUs than are left is not refused by the scheduler"
[ "$(jsonpath pod gcr-too-many '{.status.phase}')" = Pending ] || die "the pod asking too much is not Pending"
ok "a pod asking for more GPUs than are left stays Pending: Insufficient nvidia.com/gpu"
delete_pods gcr-one gcr-two gcr-too-many

# Every device-list strategy this node's kubelet (1.20) and containerd (1.6) support; cdi-cri
# needs newer ones, and doctor says so.
"$T/bin/gpu-ctk" cdi generate --output "$T/cdi/nvidia.yaml" >"$T/logs/cdi.log" 2>&1 ||
  die "gpu-ctk cdi generate: $(cat "$T/logs/cdi.log")"
for strategy in volume-mounts cdi-annotations; do
  stop plugin
  start_plugin "$strategy"
  gpu_pod "gcr-$strategy" 1
  seen=$(gpus_seen "gcr-$strategy")
  [ "$(count "$seen")" = 1 ] || die "device-list $strategy: a 1-GPU pod sees '$seen'"
  doctor >"$T/logs/doctor-$strategy.log" 2>&1 || die "doctor fails device-list $strategy: $(grep -i fail "$T/logs/doctor-$strategy.log")"
  ok "device-list $strategy: a 1-GPU pod sees exactly its GPU ($seen); doctor passes"
  delete_pods "gcr-$strategy"
done
stop plugin
start_plugin cdi-cri
gpu_pod gcr-cdi-cri 1
seen=$(gpus_seen gcr-cdi-cri)
[ -z "$seen" ] || die "device-list cdi-cri on kubelet 1.20 and containerd 1.6: the pod sees '$seen'"
if doctor >"$T/logs/doctor-cdi-cri.log" 2>&1; then die "doctor passes device-list cdi-cri on kubelet 1.20"; fi
grep -q "cdi-cri" "$T/logs/doctor-cdi-cri.log" || die "doctor fails, but not on cdi-cri: $(cat "$T/logs/doctor-cdi-cri.log")"
ok "device-list cdi-cri: this kubelet and containerd drop CDI devices (the pod sees no GPU), and doctor fails it: $(grep -i "cdi-cri" "$T/logs/doctor-cdi-cri.log" | head -n 1)"
delete_pods gcr-cdi-cri
stop plugin
start_plugin envvar

# The RuntimeClass and its example pod, applied as shipped (busybox is the image built above).
ctr_k8s images tag docker.io/gcr-test/busybox:1 docker.io/library/busybox:latest >/dev/null
kubectl apply -f etc/kubernetes/runtimeclass.yaml >/dev/null
succeeded() { [ "$(jsonpath pod cuda-check '{.status.phase}')" = Succeeded ]; }
wait_for 60 succeeded || die "the RuntimeClass example pod did not succeed: $(kubectl describe pod cuda-check | tail -n 5)"
listed=$(pod_log cuda-check check | grep -c '^/dev/nvidia[0-9]*$')
[ "$listed" = 1 ] || die "the RuntimeClass example pod lists $listed GPUs: $(pod_log cuda-check check)"
ok "etc/kubernetes/runtimeclass.yaml as shipped: its pod runs on handler nvidia and sees one GPU"
delete_pods cuda-check

# A kubelet restart: the plugin registers again on its own.
registrations() { grep -c "registered with the kubelet" "$T/logs/plugin.log"; }
before=$(registrations)
stop kubelet
start_kubelet
wait_for 60 sh -c "[ \$(grep -c 'registered with the kubelet' '$T/logs/plugin.log') -gt $before ]" ||
  die "the plugin did not register again after a kubelet restart"
if ! wait_for 60 node_ready || ! wait_for 30 gpus_are 4; then die "the node lost its GPUs over a kubelet restart"; fi
ok "a kubelet restart: the plugin registered again, the node shows 4 GPUs"

# A GPU whose device node vanishes is Unhealthy (allocatable 3), and Healthy once it is back.
node=$(cd "$DEV_ROOT/dev" && for n in nvidia[0-9]*; do echo "$n"; done | head -n 1)
numbers=$(stat -c '%t %T' "$DEV_ROOT/dev/$node")
rm "$DEV_ROOT/dev/$node"
wait_for 30 sh -c "[ \"\$('$KBIN/kubectl' get node $NODE -o jsonpath='{.status.allocatable.nvidia\\.com/gpu}')\" = 3 ]" ||
  die "allocatable did not drop to 3 when /dev/$node vanished"
mknod -m 666 "$DEV_ROOT/dev/$node" c "$((0x${numbers% *}))" "$((0x${numbers#* }))"
wait_for 30 gpus_are 4 || die "allocatable did not come back to 4 with /dev/$node"
ok "health: /dev/$node gone, allocatable 4 -> 3; back, 3 -> 4"

# Pod creation to running, with and without a GPU, on this node (median of 10 each; each time
# includes kubectl's own start, twice, alike on both sides).
time_pods() { # GPUS: the median, in ms
  : >"$T/times"
  for i in $(seq 10); do
    t0=$(date +%s%N)
    gpu_pod "gcr-time-$i" "$1"
    kubectl wait --for=condition=Ready "pod/gcr-time-$i" --timeout=60s >/dev/null ||
      die "pod gcr-time-$i did not start"
    echo $((($(date +%s%N) - t0) / 1000000)) >>"$T/times"
    delete_pods "gcr-time-$i"
  done
  sort -n "$T/times" | sed -n 5p
}
time_pods 0 >"$T/without"
time_pods 1 >"$T/with"
without=$(cat "$T/without")
with=$(cat "$T/with")
ok "pod creation to Ready, median of 10: $without ms without a GPU, $with ms with one ($((with - without)) ms more)"
stop plugin

# The shipped DaemonSet, through an overlay that changes only its host paths (those of this
# simulated host and this kubelet), with the image scripts/build-plugin-image.sh built.
mkdir -p "$T/overlay" "$T/nfd"
cp etc/kubernetes/gpu-device-plugin.yaml "$T/overlay/"
cat >"$T/overlay/kustomization.yaml" <<KUST
resources: [gpu-device-plugin.yaml]
patchesStrategicMerge: [host-paths.yaml, stub-nvml.yaml]
KUST
# The stub NVML, as the real one, starts only where the driver's control node is in the
# container's own /dev: what the DaemonSet's RuntimeClass gives its pod.
cat >"$T/overlay/stub-nvml.yaml" <<PATCH
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: gpu-device-plugin, namespace: kube-system}
spec:
  template:
    spec:
      containers:
        - name: gpu-device-plugin
          env:
            - {name: GCR_STUB_NVML_CONTROL, value: /dev/nvidiactl}
PATCH
cat >"$T/overlay/host-paths.yaml" <<PATCH
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: gpu-device-plugin, namespace: kube-system}
spec:
  template:
    spec:
      volumes:
        - {name: dev, hostPath: {path: "$DEV_ROOT/dev"}}
        - {name: proc-driver, hostPath: {path: "$DEV_ROOT/proc/driver"}}
        - {name: sys, hostPath: {path: "$DEV_ROOT/sys"}}
        - {name: driver-root, hostPath: {path: "$DRIVER_ROOT"}}
        - {name: nfd-features, hostPath: {path: "$T/nfd", type: DirectoryOrCreate}}
PATCH
kubectl apply -k "$T/overlay" >"$T/logs/daemonset.log" 2>&1 || die "kubectl apply -k: $(cat "$T/logs/daemonset.log")"
plugin_pod() { kubectl get pods -n kube-system -o jsonpath='{.items[?(@.status.phase=="Running")].metadata.name}'; }
# What the plugin's pod NAME logged.
plugin_log() {
  cat "/var/log/pods/kube-system_$1_$(kubectl -n kube-system get pod "$1" -o jsonpath='{.metadata.uid}')/gpu-device-plugin"/*.log 2>/dev/null
}
plugin_registered() { p=$(plugin_pod) && [ -n "$p" ] && plugin_log "$p" | grep -q "registered with the kubelet"; }
if ! wait_for 120 plugin_registered || ! wait_for 30 gpus_are 4; then
  die "the DaemonSet's plugin did not register: $(plugin_log "$(plugin_pod)" | tail -n 5)"
fi
first=$(plugin_pod)
plugin_log "$first" | grep -q "NVML loaded from" ||
  die "the DaemonSet's plugin has no NVML: $(plugin_log "$first" | grep NVML | tail -n 2)"
gpu_pod gcr-daemonset 1
seen=$(gpus_seen gcr-daemonset)
[ "$(count "$seen")" = 1 ] || die "with the DaemonSet's plugin a 1-GPU pod sees '$seen' (plugin: $(plugin_log "$first" | tail -n 5))"
ok "etc/kubernetes/gpu-device-plugin.yaml as shipped (host paths through an overlay): pod $first, through RuntimeClass nvidia, loads NVML and registers 4 GPUs; a 1-GPU pod sees $seen"
delete_pods gcr-daemonset
kubectl -n kube-system delete pod "$first" --wait=true >/dev/null
recreated() { p=$(plugin_pod) && [ -n "$p" ] && [ "$p" != "$first" ] && plugin_registered && gpus_are 4; }
wait_for 120 recreated || die "the DaemonSet did not recreate its plugin pod"
ok "the plugin's pod deleted: the DaemonSet made $(plugin_pod), which registered 4 GPUs again"


# MPS from the DaemonSet: the shipped MPS patch over the shipped DaemonSet (and the host paths),
# the plugin's pod run through our runtime, which gives it the simulated driver, in whose root
# NVIDIA's real MPS programs are put (test/real-driver.sh). Its daemon is asked from the host
# with NVIDIA's own client, as an operator would.
REAL_MPS=${GCR_REAL_DRIVER:-$(test/real-driver.sh)}/flat/usr/bin
for program in nvidia-cuda-mps-control nvidia-cuda-mps-server; do
  cp -p "$REAL_MPS/$program" "$DRIVER_ROOT/usr/bin/$program"
done
kubectl delete -k "$T/overlay" --wait=true >/dev/null
no_plugin_pod() { [ -z "$(kubectl get pods -n kube-system -o name)" ]; }
wait_for 60 no_plugin_pod || die "the DaemonSet's plugin pod did not go"
mkdir -p "$T/overlay-mps"
cp etc/kubernetes/gpu-device-plugin.yaml etc/kubernetes/gpu-device-plugin-mps.yaml "$T/overlay-mps/"
# The host paths but the driver root's, which the MPS patch removes (kustomize refuses two
# patches of one volume, and kubectl 1.20's loses the removal when another patch of the list
# comes first).
grep -v driver-root "$T/overlay/host-paths.yaml" >"$T/overlay-mps/host-paths.yaml"
cat >"$T/overlay-mps/kustomization.yaml" <<KUST
resources: [gpu-device-plugin.yaml]
patchesStrategicMerge: [gpu-device-plugin-mps.yaml, host-paths.yaml]
KUST
kubectl apply -k "$T/overlay-mps" >"$T/logs/daemonset-mps.log" 2>&1 ||
  die "kubectl apply -k with the MPS patch: $(cat "$T/logs/daemonset-mps.log")"
# The daemons for containers of 1 to 4 shares of the GPUs in 4 shares: one each.
MPS_DIR=$MPS_ROOT/nvidia.com-gpu/1-of-4
ask_mps() { # COMMAND [K]: the answer of the daemon for K shares (1), through NVIDIA's client
  echo "$1" | CUDA_MPS_PIPE_DIRECTORY=$MPS_ROOT/nvidia.com-gpu/${2:-1}-of-4/pipe \
    timeout 5 "$REAL_MPS/nvidia-cuda-mps-control"
}
mps_limits_set() {
  [ "$(ask_mps get_default_active_thread_percentage)" = 25.0 ] &&
    [ "$(ask_mps get_default_active_thread_percentage 4)" = 100.0 ]
}
mps_ready() { plugin_registered && gpus_are 16 && mps_limits_set; }
wait_for 120 mps_ready ||
  die "the MPS DaemonSet's plugin did not register 16 shares with its daemon's limits set: $(plugin_log "$(plugin_pod)" | tail -n 5)"
first=$(plugin_pod)
# The pids of the MPS control daemons in pods (nvidia-cuda-mps-control in kubepods); with K, the
# one for containers of K shares.
mps_daemons() {
  for pid in $(pgrep -f "nvidia-cuda-mps-control -f"); do
    grep -qs kubepods "/proc/$pid/cgroup" || continue
    [ -z "${1:-}" ] || tr '\0' '\n' <"/proc/$pid/environ" |
      grep -qx "CUDA_MPS_PIPE_DIRECTORY=$MPS_ROOT/nvidia.com-gpu/$1-of-4/pipe" || continue
    echo "$pid"
  done
}
mps_daemon() { mps_daemons 1 | head -n 1; }
daemon=$(mps_daemon)
[ -n "$daemon" ] || die "no MPS control daemon runs in a pod"
[ "$(mps_daemons | wc -l)" = 4 ] || die "not 4 MPS daemons (one per container size) in the plugin's pod: $(mps_daemons | tr '\n' ' ')"
volumes=$(kubectl -n kube-system get daemonset gpu-device-plugin -o jsonpath='{.spec.template.spec.volumes[*].name}')
case " $volumes " in *" driver-root "*) die "the MPS DaemonSet still mounts the host's driver root" ;; esac
# A quarter of each GPU's memory, by index (the simulated GPUs have 40960, 40960, 16160 and
# 16160 MiB, as NVML reports an A100-SXM4-40GB and a V100-SXM2-16GB), as the daemon prints it:
# whole GiB, truncated (4040 MiB is 3G).
memory=$(for index in 0 1 2 3; do ask_mps "get_default_device_pinned_mem_limit $index"; done | tr '\n' ' ' | sed 's/ $//')
[ "$memory" = "10G 10G 3G 3G" ] || die "the MPS daemon's pinned-memory limits are '$memory', not a quarter of 40960, 40960, 16160, 16160 MiB (10G 10G 3G 3G)"
ok "MPS from the DaemonSet (the shipped patch): pod $first runs NVIDIA's daemons (one per container size of 1 to 4 shares, in the pod's cgroup), the node shows 16 shares, the one-share daemon holds 25.0 % of the threads and pinned memory $memory"

# A pod asking for one share: the GPU, the daemon's pipe, the shared /dev/shm, its limits.
gpu_pod gcr-mps 1 "" "env | grep ^CUDA_MPS_ | sort; ls /tmp/nvidia-mps; echo probe >/dev/shm/gcr-mps-probe"
seen=$(gpus_seen gcr-mps)
[ "$(count "$seen")" = 1 ] || die "a pod with one MPS share sees '$seen'"
# The index of GPU nvidiaN (gpu-ctk info, by device minor): the daemons' ordinal for it.
gpu_index() {
  "$T/bin/gpu-ctk" info | awk -v minor="${1#nvidia}" '$1 == "Device" && $2 == "Index:" {i = $3}
    $1 == "Device" && $2 == "Minor:" && $3 == minor {print i}'
}
# Its GPU's index, and that GPU's limit in the daemon, in GiB.
index=$(gpu_index "$seen")
limit=$(ask_mps "get_default_device_pinned_mem_limit $index" | sed -n 's/^\([0-9]*\)G$/\1/p')
[ -n "$limit" ] || die "no pinned-memory limit for GPU $index ($seen)"
printed=$(pod_log gcr-mps c)
for want in CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=25 CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps control; do
  echo "$printed" | grep -qx "$want" || die "the MPS pod did not print '$want': $printed"
done
# The pod's limit in MiB, and the daemon's as it prints it: whole GiB, truncated.
pinned_mib() { echo "$1" | sed -n 's/^CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=\([0-9]*\)M$/\1/p'; }
one_mib=$(pinned_mib "$printed")
if [ -z "$one_mib" ] || [ "$((one_mib / 1024))" != "$limit" ]; then
  die "the MPS pod's pinned-memory limit '${one_mib}M' is not the daemon's ${limit}G: $printed"
fi
wait_for 10 test -f "/proc/$daemon/root/dev/shm/gcr-mps-probe" ||
  die "the MPS pod's /dev/shm is not the daemon's ($MPS_DIR/shm)"
ok "a pod with one share sees its GPU ($seen, index $index), the daemon's control pipe, its limits (25 %, $one_mib MiB, as the daemon holds for that GPU) and the daemon's /dev/shm"

# Two shares in one container: one GPU, the pipe of the daemon for 2 shares, half of the GPU.
gpu_pod gcr-mps-two 2 "" "env | grep ^CUDA_MPS_ | sort; echo probe >/dev/shm/gcr-mps-probe-two"
one_share_gpu=$seen
seen=$(gpus_seen gcr-mps-two)
[ "$(count "$seen")" = 1 ] || die "a pod with two MPS shares sees '$seen', not one GPU"
[ "$seen" = "$one_share_gpu" ] || die "the 2-share pod got $seen, not packed onto the 1-share pod's $one_share_gpu"
index=$(gpu_index "$seen")
two=$(ask_mps "get_default_device_pinned_mem_limit $index" 2 | sed -n 's/^\([0-9]*\)G$/\1/p')
[ "$(ask_mps get_default_active_thread_percentage 2)" = 50.0 ] || die "the daemon for 2 shares does not hold 50 % of the threads"
printed=$(pod_log gcr-mps-two c)
for want in CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=$((one_mib * 2))M" \
  CUDA_MPS_PIPE_DIRECTORY=/tmp/nvidia-mps; do
  echo "$printed" | grep -qx "$want" || die "the 2-share MPS pod did not print '$want': $printed"
done
[ "${two:-none}" = "$((one_mib * 2 / 1024))" ] ||
  die "the daemon for 2 shares holds '${two}G' of GPU $index, not twice one share's ${one_mib} MiB"
wait_for 10 test -f "/proc/$(mps_daemons 2)/root/dev/shm/gcr-mps-probe-two" ||
  die "the 2-share MPS pod's /dev/shm is not that of the daemon for 2 shares"
ok "a pod with two shares sees one GPU ($seen, the 1-share pod's: packed), the limits of the daemon for 2 shares (50 %, $((one_mib * 2)) MiB) and its /dev/shm"

# Five shares, more than a GPU has: Allocate refuses the kubelet's spread, with the line saying why.
gpu_pod gcr-mps-five 5
refused() { jsonpath pod gcr-mps-five '{.status.message}' | grep -q "shares of one GPU.*a GPU has at most 4"; }
wait_for 60 refused || die "a pod asking for 5 MPS shares was not refused: $(kubectl describe pod gcr-mps-five | tail -n 5)"
ok "a pod asking for 5 shares (a GPU has 4) fails admission: $(jsonpath pod gcr-mps-five '{.status.reason}'): $(jsonpath pod gcr-mps-five '{.status.message}')"
delete_pods gcr-mps-five gcr-mps-two

# The plugin's pod replaced: its daemon goes with it; the new plugin starts one of its own.
old=$(mps_daemons | tr '\n' ' ' | sed 's/ $//')
kubectl -n kube-system delete pod "$first" --wait=true >/dev/null
gone() { ! kill -0 "$1" 2>/dev/null; }
wait_for 30 gone "$daemon" || die "the MPS daemon ($daemon) outlived its plugin's pod"
for pid in $old; do wait_for 30 gone "$pid" || die "the MPS daemon $pid outlived its plugin's pod"; done
mps_recreated() { p=$(plugin_pod) && [ -n "$p" ] && [ "$p" != "$first" ] && mps_ready; }
wait_for 120 mps_recreated || die "the DaemonSet's new plugin pod did not start an MPS daemon: $(plugin_log "$(plugin_pod)" | tail -n 5)"
ok "the plugin's pod deleted: its daemons ($old) went with it, and $(plugin_pod) started others with the same limits"

# The DaemonSet deleted: the plugin stops its daemon and empties the pipe directory.
daemon=$(mps_daemon)
[ -n "$daemon" ] || die "no MPS control daemon runs in the new plugin pod"
delete_pods gcr-mps
kubectl delete -k "$T/overlay-mps" --wait=true >/dev/null
wait_for 60 no_plugin_pod || die "the MPS DaemonSet's plugin pod did not go"
gone "$daemon" || die "the MPS daemon ($daemon) outlived the DaemonSet"
[ -z "$(mps_daemons)" ] || die "MPS daemons outlived the DaemonSet: $(mps_daemons | tr '\n' ' ')"
for k in 1 2 3 4; do
  pipe=$MPS_ROOT/nvidia.com-gpu/$k-of-4/pipe
  [ -d "$pipe" ] || die "the MPS pipe directory $pipe is gone"
  [ -z "$(ls -A "$pipe")" ] || die "the MPS pipe directory $pipe is not empty: $(ls "$pipe")"
done
ok "the MPS DaemonSet deleted: its daemons stopped, their pipe directories empty"

say "all $CHECKS checks passed"
